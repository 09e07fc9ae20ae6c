#include "http_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct skillhost_http_transfer {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    size_t window;
    size_t outstanding;   /* handed to the consumer, not yet consumed */
    int stopped;
    curl_socket_t socket; /* the connection's socket while open, so stop can shut it down at once */
    /* Only the performing thread touches the rest. */
    const struct skillhost_http_callbacks *callbacks;
    long idle_timeout_ms;
    struct timespec last_activity;
    int idle;
    int status;        /* of the response whose headers arrive now */
    int head_done;     /* the final response's head was delivered */
    int callback_stopped;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_status = CURLE_FAILED_INIT;

static void global_init(void) { global_status = curl_global_init(CURL_GLOBAL_DEFAULT); }

static long elapsed_ms(const struct timespec *since) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

static void touch(skillhost_http_transfer *t) { clock_gettime(CLOCK_MONOTONIC, &t->last_activity); }

static int is_stopped(skillhost_http_transfer *t) {
    pthread_mutex_lock(&t->lock);
    int stopped = t->stopped;
    pthread_mutex_unlock(&t->lock);
    return stopped;
}

skillhost_http_transfer *skillhost_http_transfer_new(size_t window) {
    skillhost_http_transfer *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    pthread_mutex_init(&t->lock, NULL);
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&t->changed, &attributes);
    pthread_condattr_destroy(&attributes);
    t->window = window > 0 ? window : 1;
    t->socket = CURL_SOCKET_BAD;
    return t;
}

void skillhost_http_transfer_consumed(skillhost_http_transfer *t, size_t bytes) {
    pthread_mutex_lock(&t->lock);
    t->outstanding = bytes > t->outstanding ? 0 : t->outstanding - bytes;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->lock);
}

void skillhost_http_transfer_stop(skillhost_http_transfer *t) {
    pthread_mutex_lock(&t->lock);
    t->stopped = 1;
    /* A blocked recv returns at once; curl still owns (and closes) the descriptor. */
    if (t->socket != CURL_SOCKET_BAD) shutdown(t->socket, SHUT_RDWR);
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->lock);
}

void skillhost_http_transfer_free(skillhost_http_transfer *t) {
    if (t == NULL) return;
    pthread_cond_destroy(&t->changed);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static curl_socket_t open_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    skillhost_http_transfer *t = context;
    curl_socket_t fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd == CURL_SOCKET_BAD) return fd;
    pthread_mutex_lock(&t->lock);
    int stopped = t->stopped;
    if (!stopped) t->socket = fd;
    pthread_mutex_unlock(&t->lock);
    if (stopped) {
        close(fd);
        return CURL_SOCKET_BAD;
    }
    return fd;
}

static int close_socket(void *context, curl_socket_t fd) {
    skillhost_http_transfer *t = context;
    pthread_mutex_lock(&t->lock);
    if (t->socket == fd) t->socket = CURL_SOCKET_BAD;
    pthread_mutex_unlock(&t->lock);
    return close(fd);
}

static int progress(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    skillhost_http_transfer *t = context;
    if (is_stopped(t)) return 1;
    if (t->idle_timeout_ms > 0 && elapsed_ms(&t->last_activity) > t->idle_timeout_ms) {
        t->idle = 1;
        return 1;
    }
    return 0;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static int deliver_head(skillhost_http_transfer *t) {
    t->head_done = 1;
    if (t->callbacks->head != NULL && t->callbacks->head(t->callbacks->context, t->status) != 0) {
        t->callback_stopped = 1;
        return 1;
    }
    return 0;
}

static size_t on_header(char *buffer, size_t size, size_t count, void *context) {
    skillhost_http_transfer *t = context;
    size_t length = size * count;
    touch(t);
    if (t->head_done) return length; /* trailers */
    if (length >= 5 && memcmp(buffer, "HTTP/", 5) == 0) {
        /* A status line ("HTTP/1.1 200 OK", "HTTP/2 200"): the headers that follow belong to it. */
        const char *space = memchr(buffer, ' ', length);
        t->status = 0;
        for (const char *c = space != NULL ? space + 1 : buffer + length; c < buffer + length && c < space + 4; c++) {
            if (*c < '0' || *c > '9') break;
            t->status = t->status * 10 + (*c - '0');
        }
        return length;
    }
    if (length == 0 || buffer[0] == '\r' || buffer[0] == '\n') {
        /* The end of a head: an interim (1xx) one is skipped, the final one delivered. */
        if (t->status >= 200 && deliver_head(t) != 0) return 0;
        return length;
    }
    if (t->status < 200 || t->callbacks->header == NULL) return length;
    const char *colon = memchr(buffer, ':', length);
    if (colon == NULL) return length;
    const char *name = buffer, *name_end = colon;
    while (name_end > name && is_space(name_end[-1])) name_end--;
    const char *value = colon + 1, *value_end = buffer + length;
    while (value < value_end && is_space(*value)) value++;
    while (value_end > value && is_space(value_end[-1])) value_end--;
    if (t->callbacks->header(t->callbacks->context, name, (size_t)(name_end - name), value,
                             (size_t)(value_end - value)) != 0) {
        t->callback_stopped = 1;
        return 0;
    }
    return length;
}

static size_t on_body(char *buffer, size_t size, size_t count, void *context) {
    skillhost_http_transfer *t = context;
    size_t length = size * count;
    if (!t->head_done && deliver_head(t) != 0) return 0;
    if (is_stopped(t)) return 0;
    if (length > 0 && t->callbacks->body != NULL) {
        pthread_mutex_lock(&t->lock);
        t->outstanding += length;
        pthread_mutex_unlock(&t->lock);
        if (t->callbacks->body(t->callbacks->context, buffer, length) != 0) {
            t->callback_stopped = 1;
            return 0;
        }
        /* Backpressure: wait while the consumer holds more than the window (or until stopped). */
        pthread_mutex_lock(&t->lock);
        while (t->outstanding > t->window && !t->stopped) pthread_cond_wait(&t->changed, &t->lock);
        int stopped = t->stopped;
        pthread_mutex_unlock(&t->lock);
        if (stopped) return 0;
    }
    touch(t); /* waiting for the consumer is not the server's silence */
    return length;
}

#define SET(option, value)                                                                                      \
    do {                                                                                                        \
        if (status == CURLE_OK) status = curl_easy_setopt(easy, option, value);                                \
    } while (0)

int skillhost_http_transfer_perform(skillhost_http_transfer *t, const char *url, const char *method,
                                    const char *const *headers, size_t count, const void *body, size_t body_length,
                                    long connect_timeout_ms, long idle_timeout_ms,
                                    const struct skillhost_http_callbacks *callbacks, char *error,
                                    size_t error_size) {
    char message[CURL_ERROR_SIZE] = {0};
    if (error_size > 0) error[0] = '\0';
    pthread_once(&global_once, global_init);
    if (global_status != CURLE_OK) {
        if (error_size > 0) snprintf(error, error_size, "libcurl did not start: %s", curl_easy_strerror(global_status));
        return SKILLHOST_HTTP_FAILED;
    }
    CURL *easy = curl_easy_init();
    if (easy == NULL) {
        if (error_size > 0) snprintf(error, error_size, "libcurl could not make a transfer (out of memory)");
        return SKILLHOST_HTTP_FAILED;
    }
    struct curl_slist *list = NULL;
    int out_of_memory = 0;
    for (size_t i = 0; i < count && !out_of_memory; i++) {
        struct curl_slist *next = curl_slist_append(list, headers[i]);
        if (next == NULL) out_of_memory = 1; else list = next;
    }
    /* libcurl would otherwise ask larger bodies to wait for "100 Continue", a second lost with servers that
       never send it. */
    struct curl_slist *next = out_of_memory ? NULL : curl_slist_append(list, "Expect:");
    if (next == NULL) out_of_memory = 1; else list = next;

    t->callbacks = callbacks;
    t->idle_timeout_ms = idle_timeout_ms;
    t->status = 0;
    t->head_done = 0;
    t->callback_stopped = 0;
    t->idle = 0;
    touch(t);

    CURLcode status = out_of_memory ? CURLE_OUT_OF_MEMORY : CURLE_OK;
    SET(CURLOPT_URL, url);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    /* Certificates as OpenSSL's tools take them: a private authority's file or folder, else the system's. */
    const char *authority_file = getenv("SSL_CERT_FILE"), *authority_folder = getenv("SSL_CERT_DIR");
    if (authority_file != NULL && *authority_file) SET(CURLOPT_CAINFO, authority_file);
    if (authority_folder != NULL && *authority_folder) SET(CURLOPT_CAPATH, authority_folder);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_ERRORBUFFER, message);
    SET(CURLOPT_HTTPHEADER, list);
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms > 0 ? connect_timeout_ms : 0L);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_OPENSOCKETFUNCTION, open_socket);
    SET(CURLOPT_OPENSOCKETDATA, t);
    SET(CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    SET(CURLOPT_CLOSESOCKETDATA, t);
    SET(CURLOPT_NOPROGRESS, 0L);
    SET(CURLOPT_XFERINFOFUNCTION, progress);
    SET(CURLOPT_XFERINFODATA, t);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, t);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, t);
    if (body != NULL) {
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
        SET(CURLOPT_POSTFIELDS, body);
    }
    if (method != NULL && strcmp(method, body != NULL ? "POST" : "GET") != 0) SET(CURLOPT_CUSTOMREQUEST, method);

    int result;
    if (status != CURLE_OK) {
        if (error_size > 0) snprintf(error, error_size, "libcurl refused the request: %s", curl_easy_strerror(status));
        result = SKILLHOST_HTTP_FAILED;
    } else {
        status = curl_easy_perform(easy);
        if (status == CURLE_OK && !t->head_done && !t->callback_stopped) {
            /* A response with a head and no body: the head was not delivered by the body callback. */
            if (t->status >= 200) deliver_head(t);
        }
        if (status == CURLE_OK) {
            result = SKILLHOST_HTTP_COMPLETE;
        } else if (t->callback_stopped || is_stopped(t)) {
            result = SKILLHOST_HTTP_STOPPED;
        } else if (t->idle) {
            result = SKILLHOST_HTTP_IDLE_TIMEOUT;
        } else {
            switch (status) {
            case CURLE_COULDNT_CONNECT: result = SKILLHOST_HTTP_CANNOT_CONNECT; break;
            case CURLE_COULDNT_RESOLVE_HOST:
            case CURLE_COULDNT_RESOLVE_PROXY: result = SKILLHOST_HTTP_UNKNOWN_HOST; break;
            case CURLE_OPERATION_TIMEDOUT: result = SKILLHOST_HTTP_IDLE_TIMEOUT; break;
            case CURLE_RECV_ERROR:
            case CURLE_SEND_ERROR:
            case CURLE_PARTIAL_FILE:
            case CURLE_GOT_NOTHING:
            case CURLE_HTTP2:
            case CURLE_HTTP2_STREAM: result = SKILLHOST_HTTP_CONNECTION_LOST; break;
            default: result = SKILLHOST_HTTP_FAILED; break;
            }
            long os_error = 0;
            curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_error);
            if (error_size > 0 && result == SKILLHOST_HTTP_CANNOT_CONNECT && os_error == ECONNREFUSED) {
                snprintf(error, error_size, "connection refused");
            } else if (error_size > 0 && result == SKILLHOST_HTTP_CANNOT_CONNECT && os_error != 0) {
                snprintf(error, error_size, "cannot connect: %s", strerror((int)os_error));
            } else if (error_size > 0) {
                snprintf(error, error_size, "%s", message[0] != '\0' ? message : curl_easy_strerror(status));
            }
        }
    }
    curl_easy_cleanup(easy);
    curl_slist_free_all(list);
    return result;
}
