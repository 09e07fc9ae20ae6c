/* Test fixture: a third-party-style plugin (IPv4 subnet calculator) written without looking at the router. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "skill_sdk.h"

static int parse_ip(const char *text, uint32_t *out, const char **rest) {
    unsigned a[4];
    int used = 0;
    if (sscanf(text, "%3u.%3u.%3u.%3u%n", &a[0], &a[1], &a[2], &a[3], &used) != 4) return -1;
    for (int i = 0; i < 4; i++)
        if (a[i] > 255) return -1;
    *out = (a[0] << 24) | (a[1] << 16) | (a[2] << 8) | a[3];
    *rest = text + used;
    return 0;
}

static int parse_cidr(const char *text, uint32_t *ip, int *prefix) {
    const char *rest;
    int used = 0;
    if (parse_ip(text, ip, &rest) != 0) return -1;
    if (sscanf(rest, "/%2d%n", prefix, &used) != 1 || rest[used] != '\0' || *prefix < 0 || *prefix > 32) return -1;
    return 0;
}

static uint32_t mask_of(int prefix) { return prefix == 0 ? 0 : 0xFFFFFFFFu << (32 - prefix); }

static void format_ip(uint32_t ip, char out[16]) {
    snprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

static char *subnet_info(const char *cidr, skill_error *error) {
    uint32_t ip;
    int prefix;
    if (parse_cidr(cidr, &ip, &prefix) != 0) {
        skill_fail(error, SKILL_ERR_INVALID_ARGS, "write the subnet in CIDR notation, e.g. 192.168.1.0/24");
        return NULL;
    }
    uint32_t mask = mask_of(prefix), network = ip & mask, broadcast = network | ~mask;
    char net[16], bc[16], nm[16], first[16], last[16];
    format_ip(network, net);
    format_ip(broadcast, bc);
    format_ip(mask, nm);
    long long hosts = prefix >= 31 ? (1LL << (32 - prefix)) : (1LL << (32 - prefix)) - 2;
    format_ip(prefix >= 31 ? network : network + 1, first);
    format_ip(prefix >= 31 ? broadcast : broadcast - 1, last);
    char *out = malloc(200);
    if (out)
        snprintf(out, 200, "network %s/%d, netmask %s, broadcast %s, %lld usable hosts (%s - %s)", net, prefix, nm, bc,
                 hosts, first, last);
    return out;
}

static bool ip_in_subnet(const char *ip, const char *cidr, skill_error *error) {
    uint32_t address, network;
    int prefix;
    const char *rest;
    if (parse_ip(ip, &address, &rest) != 0 || *rest != '\0') {
        skill_fail(error, SKILL_ERR_INVALID_ARGS, "ip must be an IPv4 address such as 10.0.0.7");
        return false;
    }
    if (parse_cidr(cidr, &network, &prefix) != 0) {
        skill_fail(error, SKILL_ERR_INVALID_ARGS, "cidr must look like 10.0.0.0/8");
        return false;
    }
    return (address & mask_of(prefix)) == (network & mask_of(prefix));
}

static char *prefix_to_netmask(int32_t prefix) {
    char *out = malloc(16);
    if (out) format_ip(mask_of(prefix), out);
    return out;
}

static void release(char *s) { free(s); }

static const skill_descriptor skills[] = {
    SKILL_TYPED("subnet_info", "Subnet info",
                "Network address, netmask, broadcast address and usable host range of an IPv4 subnet in CIDR notation "
                "(a.b.c.d/n).",
                "string subnet_info(string cidr, error error)", subnet_info),
    SKILL_TYPED("ip_in_subnet", "IP in subnet?", "Whether an IPv4 address belongs to a subnet given in CIDR notation.",
                "bool ip_in_subnet(string ip, string cidr, error error)", ip_in_subnet),
    SKILL_TYPED_SCHEMA("prefix_to_netmask", "Prefix length to netmask", "CIDR prefix length (/0 to /32) as a dotted "
                       "netmask, e.g. 24 -> 255.255.255.0.",
                       "{\"type\":\"object\",\"properties\":{\"prefix\":{\"type\":\"integer\",\"minimum\":0,"
                       "\"maximum\":32,\"description\":\"the number after the slash\"}},\"required\":[\"prefix\"],"
                       "\"additionalProperties\":false}",
                       "string prefix_to_netmask(int32 prefix)", prefix_to_netmask),
};
SKILL_PLUGIN_FULL("ipcalc", "0.2.0", "IPv4 subnet calculator", skills, NULL, NULL, release)
