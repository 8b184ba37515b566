/* lua-threads N SCRIPT [ARGS...]: run SCRIPT in N Lua states at once, each
 * on a thread of its own, as a multi-state host (or luv's threads) does.
 * Each state gets the globals STATE (1 to N) and NSTATES and a function
 * barrier() that returns once every state has called it, so a test can
 * order what the states do, and share(pointer) and shared() to hand a raw
 * pointer from one state to the others. Exits 0 if every script ran without
 * error; the first error, printed with its state, ends the process with
 * status 1 at once. */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static pthread_barrier_t barrier;
static const char *script;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static void *shared_value;

/* share(lightuserdata): hand a raw pointer (an OpenCL object) to the other
 * states; shared() returns it, or nil. */
static int
l_share(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
    pthread_mutex_lock(&shared_lock);
    shared_value = lua_touserdata(L, 1);
    pthread_mutex_unlock(&shared_lock);
    return 0;
}

static int
l_shared(lua_State *L)
{
    void *v;

    pthread_mutex_lock(&shared_lock);
    v = shared_value;
    pthread_mutex_unlock(&shared_lock);
    if (v == NULL)
        lua_pushnil(L);
    else
        lua_pushlightuserdata(L, v);
    return 1;
}

static int
l_barrier(lua_State *L)
{
    (void)L;
    pthread_barrier_wait(&barrier);
    return 0;
}

/* The other states may be waiting for this one in barrier() or for what
 * it would have done: a state's failure ends the test here, at once. */
static void
fail(int id, const char *what)
{
    fprintf(stderr, "state %d: %s\n", id, what);
    fflush(NULL);
    _exit(1);
}

struct run {
    int id, n;
    pthread_t thread;
};

static void *
run_state(void *p)
{
    struct run *r = p;
    lua_State *L = luaL_newstate();

    if (L == NULL)
        fail(r->id, "cannot create a Lua state");
    luaL_openlibs(L);
    lua_pushinteger(L, r->id);
    lua_setglobal(L, "STATE");
    lua_pushinteger(L, r->n);
    lua_setglobal(L, "NSTATES");
    lua_pushcfunction(L, l_barrier);
    lua_setglobal(L, "barrier");
    lua_pushcfunction(L, l_share);
    lua_setglobal(L, "share");
    lua_pushcfunction(L, l_shared);
    lua_setglobal(L, "shared");
    if (luaL_loadfile(L, script) != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK)
        fail(r->id, lua_tostring(L, -1));
    /* Closing the state closes its clgc queue, on its own thread. */
    lua_close(L);
    return NULL;
}

int
main(int argc, char **argv)
{
    int n;
    struct run *runs;

    if (argc < 3 || (n = atoi(argv[1])) < 1 || n > 64) {
        fprintf(stderr, "usage: lua-threads N SCRIPT\n");
        return 2;
    }
    script = argv[2];
    runs = calloc((size_t)n, sizeof(*runs));
    if (runs == NULL)
        return 1;
    pthread_barrier_init(&barrier, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        runs[i] = (struct run){i + 1, n, 0};
        if (pthread_create(&runs[i].thread, NULL, run_state, &runs[i]) != 0) {
            fprintf(stderr, "lua-threads: cannot start a thread\n");
            return 1;
        }
    }
    for (int i = 0; i < n; i++)
        pthread_join(runs[i].thread, NULL);
    pthread_barrier_destroy(&barrier);
    free(runs);
    printf("%d states: ok\n", n);
    return 0;
}
