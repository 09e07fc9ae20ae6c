// Hashes for bearer tokens and the signed state of confirmation round trips, from GnuTLS (which libmicrohttpd's
// HTTPS already links), and a comparison whose time does not leak where two secrets differ.

#include "http_server.h"

#include <gnutls/crypto.h>
#include <sys/random.h>

int skillhost_sha256(const void *data, size_t length, uint8_t digest[32]) {
    return gnutls_hash_fast(GNUTLS_DIG_SHA256, data, length, digest) == 0 ? 0 : -1;
}

int skillhost_hmac_sha256(const void *key, size_t key_length, const void *data, size_t length, uint8_t mac[32]) {
    return gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, key_length, data, length, mac) == 0 ? 0 : -1;
}

int skillhost_random_bytes(void *buffer, size_t length) {
    unsigned char *out = buffer;
    while (length > 0) {
        ssize_t count = getrandom(out, length, 0);
        if (count <= 0) return -1;
        out += count;
        length -= (size_t)count;
    }
    return 0;
}

int skillhost_equal_constant_time(const void *first, const void *second, size_t length) {
    const volatile unsigned char *a = first, *b = second;
    unsigned char difference = 0;
    for (size_t index = 0; index < length; index++) difference |= a[index] ^ b[index];
    return difference == 0;
}
