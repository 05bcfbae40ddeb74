/* ucx_put_flush_messages: the messages UCX itself sends for a put + flush over TCP, with no
 * MPI and no clampi in the process. Two processes (fork), one UCX context each, configured
 * as clampi configures its own (UCX's native TCP put off unless PUT_ENABLE=y is given, so
 * puts are UCX's active-message emulation); the origin does N x (8-byte put, endpoint flush)
 * ("each") or N puts and one flush ("once"). Run under `strace -ff` by
 * bench/ucx_put_flush_messages.sh, which counts each process's sends.
 * Usage: ucx_put_flush_messages each|once N   (or: ucx_put_flush_messages version) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

static ucp_context_h context;
static ucp_worker_h worker;

static void start_ucx(void) {
    ucp_config_t *config;
    if (ucp_config_read(NULL, NULL, &config) != UCS_OK) exit(1);
    const char *put = getenv("PUT_ENABLE");
    ucp_config_modify(config, "PUT_ENABLE", put ? put : "n");
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_RMA | UCP_FEATURE_AM};
    if (ucp_init(&params, config, &context) != UCS_OK) exit(1);
    ucp_config_release(config);
    ucp_worker_params_t wp = {.field_mask = 0};
    if (ucp_worker_create(context, &wp, &worker) != UCS_OK) exit(1);
}

static void wait_request(void *req) {
    if (req == NULL) return;
    if (UCS_PTR_IS_ERR(req)) {
        fprintf(stderr, "ucx_put_flush_messages: %s\n", ucs_status_string(UCS_PTR_STATUS(req)));
        exit(1);
    }
    while (ucp_request_check_status(req) == UCS_INPROGRESS) ucp_worker_progress(worker);
    ucp_request_free(req);
}

static void write_all(int fd, const void *p, size_t n) {
    if (write(fd, p, n) != (ssize_t)n) exit(1);
}
static void read_all(int fd, void *p, size_t n) {
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, (char *)p + got, n - got);
        if (r <= 0) exit(1);
        got += (size_t)r;
    }
}

/* The target: maps a buffer, hands its worker address and key to the origin, and makes
 * progress (serving the emulated puts) until the origin says it is done. */
static int target(int to_origin, int from_origin) {
    static char buf[4096];
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                               .address = buf,
                               .length = sizeof buf};
    ucp_mem_h mem;
    void *rkey;
    size_t rkey_len, addr_len;
    ucp_address_t *addr;
    if (ucp_mem_map(context, &mp, &mem) != UCS_OK || ucp_rkey_pack(context, mem, &rkey, &rkey_len) != UCS_OK ||
        ucp_worker_get_address(worker, &addr, &addr_len) != UCS_OK)
        return 1;
    uint64_t where = (uint64_t)(uintptr_t)buf;
    write_all(to_origin, &addr_len, sizeof addr_len);
    write_all(to_origin, addr, addr_len);
    write_all(to_origin, &rkey_len, sizeof rkey_len);
    write_all(to_origin, rkey, rkey_len);
    write_all(to_origin, &where, sizeof where);
    fcntl(from_origin, F_SETFL, O_NONBLOCK);
    char done;
    while (read(from_origin, &done, 1) != 1) ucp_worker_progress(worker);
    return buf[0] == 7 ? 0 : 2; /* the puts landed */
}

static int origin(int from_target, int to_target, int flush_each, int n) {
    size_t addr_len, rkey_len;
    uint64_t where;
    read_all(from_target, &addr_len, sizeof addr_len);
    void *addr = malloc(addr_len);
    read_all(from_target, addr, addr_len);
    read_all(from_target, &rkey_len, sizeof rkey_len);
    void *packed = malloc(rkey_len);
    read_all(from_target, packed, rkey_len);
    read_all(from_target, &where, sizeof where);
    ucp_ep_params_t ep_params = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = addr};
    ucp_ep_h ep;
    ucp_rkey_h rkey;
    if (ucp_ep_create(worker, &ep_params, &ep) != UCS_OK || ucp_ep_rkey_unpack(ep, packed, &rkey) != UCS_OK) return 1;
    ucp_request_param_t none = {.op_attr_mask = 0};
    char value[8] = {7};
    for (int i = 0; i < n; i++) {
        wait_request(ucp_put_nbx(ep, value, sizeof value, where, rkey, &none));
        if (flush_each) wait_request(ucp_ep_flush_nbx(ep, &none));
    }
    if (!flush_each) wait_request(ucp_ep_flush_nbx(ep, &none));
    write_all(to_target, "x", 1);
    int status = 1;
    wait(&status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "version")) {
        printf("%s\n", ucp_get_version_string());
        return 0;
    }
    if (argc != 3 || (strcmp(argv[1], "each") && strcmp(argv[1], "once"))) {
        fprintf(stderr, "usage: ucx_put_flush_messages each|once N\n");
        return 1;
    }
    int n = atoi(argv[2]), up[2], down[2];
    if (n < 1 || pipe(up) || pipe(down)) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    start_ucx(); /* after the fork: one context per process */
    if (pid == 0) return target(up[1], down[0]);
    return origin(up[0], down[1], !strcmp(argv[1], "each"), n);
}
