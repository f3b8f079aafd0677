/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Authenticated wire (spinnic --wire-key, doc/NOTES.md "Authenticated
 * wire"): key file, HKDF, and the GMAC itself, all from OpenSSL's
 * libcrypto (AES-256-GCM with the frame as additional data and nothing to
 * encrypt: GMAC, on AES-NI and carry-less multiply where the CPU has
 * them). The framing around it (trailer, lengths, checksums, the IV) is in
 * wire.c.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "wire.h"
#include "wire_internal.h"

/* HKDF inputs: change the version when the frame layout or the MAC
 * changes, so that nodes of different layouts fail the MAC, not later. */
static const char kdf_salt[] = "spinnic wire v1";
static const char kdf_info[] = "spinnic wire AES-256-GMAC key";

int
spinnic_wire_key_derive(const void *secret, size_t len,
			uint8_t key_p[SPINNIC_WIRE_KEY_LEN])
{
	OSSL_PARAM params[5], *q = params;
	EVP_KDF_CTX *kctx = NULL;
	EVP_KDF *kdf;
	int rc = -EIO;

	if (len < SPINNIC_WIRE_SECRET_MIN || len > SPINNIC_WIRE_SECRET_MAX)
		return -EINVAL;
	kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_HKDF, NULL);
	if (kdf != NULL)
		kctx = EVP_KDF_CTX_new(kdf);
	EVP_KDF_free(kdf);
	if (kctx == NULL)
		return -EIO;
	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
						(char *)"SHA256", 0);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
						 (void *)secret, len);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
						 (void *)kdf_salt,
						 sizeof(kdf_salt) - 1);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
						 (void *)kdf_info,
						 sizeof(kdf_info) - 1);
	*q = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(kctx, key_p, SPINNIC_WIRE_KEY_LEN, params) == 1)
		rc = 0;
	EVP_KDF_CTX_free(kctx);
	return rc;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Hex text (digits, then only white space): decode in place.
 * @return decoded length, or 0 when @p buf is not hex text */
static size_t
hex_decode(uint8_t *buf, size_t len)
{
	size_t n = 0, i;

	while (n < len && hexval(buf[n]) >= 0)
		n++;
	for (i = n; i < len; i++)
		if (!isspace(buf[i]))
			return 0;
	if (n == 0 || n % 2 != 0)
		return 0;
	for (i = 0; i < n / 2; i++)
		buf[i] = (uint8_t)(hexval(buf[2 * i]) << 4 |
				   hexval(buf[2 * i + 1]));
	return n / 2;
}

int
spinnic_wire_key_load(const char *path, uint8_t key_p[SPINNIC_WIRE_KEY_LEN])
{
	/* one byte more than allowed: tells "too long" from "just fits" */
	uint8_t buf[2 * SPINNIC_WIRE_SECRET_MAX + 2];
	size_t len = 0, sec;
	struct stat st;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out;
	}
	if (st.st_mode & 077) {
		rc = -EPERM;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0 || (len += (size_t)n) == sizeof(buf))
			break;
	}
	sec = hex_decode(buf, len);
	if (sec == 0)
		sec = len; /* raw bytes */
	if (len == sizeof(buf) || sec > SPINNIC_WIRE_SECRET_MAX)
		rc = -EFBIG;
	else if (sec < SPINNIC_WIRE_SECRET_MIN)
		rc = -EMSGSIZE;
	else
		rc = spinnic_wire_key_derive(buf, sec, key_p);
out:
	OPENSSL_cleanse(buf, sizeof(buf));
	close(fd);
	return rc;
}

/* First counter of a context created now: CLOCK_REALTIME in ns (the
 * argument for IV uniqueness is at spinnic_wire_auth_seal, wire.h). */
static uint64_t
ctr_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct spinnic_wire_auth *
spinnic_wire_auth_create(const uint8_t key[SPINNIC_WIRE_KEY_LEN])
{
	struct spinnic_wire_auth *a = calloc(1, sizeof(*a));
	EVP_CIPHER *c = NULL;

	if (a == NULL)
		return NULL;
	a->ctx = EVP_CIPHER_CTX_new();
	/* fetched once, explicitly: no implicit fetch per frame */
	if (a->ctx != NULL)
		c = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	if (c == NULL || EVP_EncryptInit_ex2(a->ctx, c, key, NULL, NULL) != 1) {
		EVP_CIPHER_free(c);
		spinnic_wire_auth_free(a);
		errno = EIO;
		return NULL;
	}
	EVP_CIPHER_free(c); /* the context holds its own reference */
	a->next_ctr = ctr_seed();
	return a;
}

void
spinnic_wire_auth_free(struct spinnic_wire_auth *a)
{
	if (a == NULL)
		return;
	EVP_CIPHER_CTX_free(a->ctx); /* cleanses the key schedule */
	free(a);
}

int
wire_auth_tag(struct spinnic_wire_auth *a, const uint8_t iv[WIRE_AUTH_IV_LEN],
	      const uint8_t *data, size_t len,
	      uint8_t tag_p[SPINNIC_WIRE_AUTH_TAG_LEN])
{
	uint8_t none[16];
	int outl;

	if (len > INT32_MAX ||
	    EVP_EncryptInit_ex2(a->ctx, NULL, NULL, iv, NULL) != 1 ||
	    EVP_EncryptUpdate(a->ctx, NULL, &outl, data, (int)len) != 1 ||
	    EVP_EncryptFinal_ex(a->ctx, none, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_GCM_GET_TAG,
				SPINNIC_WIRE_AUTH_TAG_LEN, tag_p) != 1)
		return -EIO;
	return 0;
}

int
wire_auth_verify(struct spinnic_wire_auth *a,
		 const uint8_t iv[WIRE_AUTH_IV_LEN], const uint8_t *data,
		 size_t len, const uint8_t tag[SPINNIC_WIRE_AUTH_TAG_LEN])
{
	uint8_t t[SPINNIC_WIRE_AUTH_TAG_LEN];

	if (wire_auth_tag(a, iv, data, len, t) != 0)
		return -1;
	return CRYPTO_memcmp(t, tag, sizeof(t)) == 0 ? 0 : -1;
}

uint64_t
spinnic_wire_auth_next_ctr(const struct spinnic_wire_auth *a)
{
	return a->next_ctr;
}
