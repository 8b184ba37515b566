/* The service of clgc.core's areas (lclgc.h): the state's completion
 * queue, errors, handles, worker jobs, and the failures of Lua handlers;
 * the module's entry is the hub's (lmodule.c).
 *
 * Failures. clgc keeps the failures that handlers report with
 * clgc_callback_fail in one list for the whole process, and this binding
 * installs no runtime, so they wait there for clgc_callback_error_take.
 * Several Lua states on several threads share that list: whichever state
 * takes a failure next may not be the one whose handler failed. So the
 * value given to clgc_callback_fail is a record of ours naming its state
 * (the error value itself stays in that state's registry, as no other
 * state may touch it); a state that takes a record moves it to its owner's
 * inbox, and each state raises only what is in its own inbox. Records are
 * kept in a list of live ones so that a failure clgc reports for someone
 * else (another library in the process, or a thread clgc could not attach)
 * is recognised and never dereferenced as ours. */

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lclgc.h"

struct lclgc_fail {
    struct lclgc_fail *next;
    lclgc_state *owner; /* NULL once the owner has closed */
    int ref;            /* the error value in the owner's registry */
    const char *what;   /* which of our handlers failed */
    const char *command;
    int code;
};

struct lclgc_state {
    clgc_queue_t *queue;
    lclgc_timers *timers;
    lua_State *L;  /* the thread running the drain in progress */
    int draining;  /* a drain is running this state's handlers */
    int dead;      /* the Lua state has closed: handlers only free */
    long posts;    /* posts made and not yet run or freed (owner thread) */
    unsigned jobs; /* worker jobs that have yet to post */
    pthread_mutex_t jobs_lock;
    pthread_cond_t jobs_cond;
    struct lclgc_fail *inbox, **inbox_tail; /* under lclgc_lock */
};

struct lclgc_post {
    lclgc_state *st;
    int fn_ref, arg_ref;
    const char *what;
    cl_int status; /* what a post made by lclgc_post_queue passes */
};

static pthread_mutex_t lclgc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lclgc_fail *lclgc_live; /* given to clgc, not yet taken */
static int lclgc_state_key;
static unsigned long lclgc_routed; /* under lclgc_lock: for the tests */
static int lclgc_reapers;          /* orphaned queues still open (atomic) */

/* ------------------------------------------------------------------------
 * Errors */

/* The name of an OpenCL error code, from clgc's table of every code in the
 * registry; "CL_UNKNOWN_ERROR" for a code it lacks. */
const char *
lclgc_cl_name(cl_int err)
{
    const char *name = clgc_cl_error_name(err);

    return name != NULL ? name : "CL_UNKNOWN_ERROR";
}

/* Whether a chunk is the front module, clgc.lua, by its source name: an
 * error is never reported at a position inside it, since the mistake is in
 * the code that called it. */
static int
lclgc_is_front(const char *source)
{
    size_t n = strlen(source);

    return (n >= 9 && strcmp(source + n - 9, "/clgc.lua") == 0) ||
           strcmp(source, "@clgc.lua") == 0;
}

/* Push "chunk:line: " for the innermost Lua function on the stack that is
 * not the front module's (C functions such as pcall have no line). */
static void
lclgc_where(lua_State *L)
{
    lua_Debug ar;

    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0 ||
            lclgc_is_front(ar.source))
            continue;
        lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
        return;
    }
    lua_pushliteral(L, "");
}

/* luaL_error, positioned at the user's code (lclgc_where). */
int
lclgc_error(lua_State *L, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    lclgc_where(L);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    lua_concat(L, 2);
    return lua_error(L);
}

/* "fn: argument #idx: what, got <type>". */
int
lclgc_argerror(lua_State *L, int idx, const char *fn, const char *what)
{
    return lclgc_error(L, "%s: argument #%d: %s, got %s", fn, idx, what,
                       lclgc_typename(L, idx));
}

lua_Integer
lclgc_checkint(lua_State *L, int idx, const char *fn)
{
    int isint;
    lua_Integer v = lua_tointegerx(L, idx, &isint);

    if (!isint || lua_type(L, idx) != LUA_TNUMBER)
        lclgc_argerror(L, idx, fn, "integer expected");
    return v;
}

lua_Integer
lclgc_optint(lua_State *L, int idx, lua_Integer def, const char *fn)
{
    return lua_isnoneornil(L, idx) ? def : lclgc_checkint(L, idx, fn);
}

lua_Number
lclgc_checknum(lua_State *L, int idx, const char *fn)
{
    if (lua_type(L, idx) != LUA_TNUMBER)
        lclgc_argerror(L, idx, fn, "number expected");
    return lua_tonumber(L, idx);
}

const char *
lclgc_checkstr(lua_State *L, int idx, size_t *len, const char *fn)
{
    size_t n;
    const char *s;

    if (lua_type(L, idx) != LUA_TSTRING)
        lclgc_argerror(L, idx, fn, "string expected");
    s = lua_tolstring(L, idx, &n);
    /* Read as a C string (no len asked): one with a NUL inside would be
     * read cut short (a kernel of another name, options cut). */
    if (len == NULL && strlen(s) != n)
        lclgc_argerror(L, idx, fn, "a string without a NUL inside expected");
    if (len != NULL)
        *len = n;
    return s;
}

const char *
lclgc_optstr(lua_State *L, int idx, const char *def, const char *fn)
{
    return lua_isnoneornil(L, idx) ? def : lclgc_checkstr(L, idx, NULL, fn);
}

void
lclgc_checktype(lua_State *L, int idx, int type, const char *fn)
{
    /* Nothing pushed before the type is read: an argument not passed
     * would take the pushed value's place ("got string"), not "no
     * value". */
    if (lua_type(L, idx) != type)
        lclgc_error(L, "%s: argument #%d: %s expected, got %s", fn, idx,
                    lua_typename(L, type), lclgc_typename(L, idx));
}

/* The length of a table as its raw array part counts it: a lying __len
 * (2^62, -1) must not size an array. Bounded so that any count of it fits
 * a cl_uint and an int. */
size_t
lclgc_rawlen(lua_State *L, int idx, const char *fn)
{
    size_t n = lua_rawlen(L, idx);

    if (n > INT32_MAX)
        lclgc_error(L, "%s: a table of %I elements is too long", fn,
                    (lua_Integer)n);
    return n;
}

/* One of names (def if the argument is absent), as its index. */
int
lclgc_checkopt(lua_State *L, int idx, const char *def,
               const char *const names[], const char *fn)
{
    const char *name = def != NULL ? lclgc_optstr(L, idx, def, fn)
                                   : lclgc_checkstr(L, idx, NULL, fn);

    for (int i = 0; names[i] != NULL; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return lclgc_error(L, "%s: argument #%d: invalid option '%s'", fn, idx,
                       name);
}

/* Option field of the options table at idx: one of names (def where
 * the field is absent, or the options are), as its index. An error names
 * the option, not a stack slot the caller never passed. */
int
lclgc_opt_choice(lua_State *L, int idx, const char *field, const char *def,
                 const char *const names[], const char *fn)
{
    const char *name = def;
    int i;

    if (lua_type(L, idx) == LUA_TTABLE) {
        int t = lua_getfield(L, idx, field);

        if (t != LUA_TNIL && t != LUA_TSTRING)
            lclgc_error(L, "%s: option '%s': a string expected, got %s", fn,
                        field, lclgc_typename(L, -1));
        if (t == LUA_TSTRING)
            name = lua_tostring(L, -1);
    }
    for (i = 0; names[i] != NULL; i++)
        if (strcmp(names[i], name) == 0)
            break;
    if (names[i] == NULL)
        lclgc_error(L, "%s: option '%s': invalid value '%s'", fn, field, name);
    if (lua_type(L, idx) == LUA_TTABLE)
        lua_pop(L, 1);
    return i;
}

/* __tostring of an error object: its message. */
static int
lclgc_error_tostring(lua_State *L)
{
    lua_getfield(L, 1, "message");
    return 1;
}

/* The metatable of error objects, made once per state. */
static void
lclgc_push_error_meta(lua_State *L)
{
    if (luaL_newmetatable(L, LCLGC_ERROR)) {
        lua_pushcfunction(L, lclgc_error_tostring);
        lua_setfield(L, -2, "__tostring");
    }
}

/* Raise a failure of OpenCL or clgc as an error object (docs/lua.md,
 * Errors): { code, name, func, message, log }, whose message (and
 * tostring) is "<position>fn: name (code)[: detail][\nlog]". fmt (NULL:
 * no detail) is lua_pushfstring's. log may be NULL. */
int
lclgc_fail(lua_State *L, const char *fn, int code, const char *name,
           const char *log, const char *fmt, ...)
{
    va_list ap;
    int top;

    lua_createtable(L, 0, 5);
    lua_pushinteger(L, code);
    lua_setfield(L, -2, "code");
    lua_pushstring(L, name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, fn);
    lua_setfield(L, -2, "func");
    if (log != NULL) {
        lua_pushstring(L, log);
        lua_setfield(L, -2, "log");
    }
    top = lua_gettop(L);
    lclgc_where(L);
    lua_pushfstring(L, "%s: %s (%d)", fn, name, code);
    if (fmt != NULL) {
        lua_pushliteral(L, ": ");
        va_start(ap, fmt);
        lua_pushvfstring(L, fmt, ap);
        va_end(ap);
    }
    if (log != NULL) {
        lua_pushliteral(L, "\n");
        lua_pushstring(L, log);
    }
    lua_concat(L, lua_gettop(L) - top);
    lua_setfield(L, -2, "message");
    lclgc_push_error_meta(L);
    lua_setmetatable(L, -2);
    return lua_error(L);
}

/* An OpenCL error: "<function>: <OpenCL name> (<code>)". */
int
lclgc_cl_error(lua_State *L, const char *fn, cl_int err)
{
    return lclgc_fail(L, fn, err, lclgc_cl_name(err), NULL, NULL);
}

int
lclgc_clgc_error(lua_State *L, const char *fn, int err)
{
    const char *name = lua_pushfstring(L, "CLGC_%s", clgc_err_name(err));

    return lclgc_fail(L, fn, err, name, NULL, "%s", clgc_strerror(err));
}

/* ------------------------------------------------------------------------
 * Handles */

/* self of a handle's own function: a handle of the class named by the
 * function's upvalue, released or not (each function of the class is a
 * closure over its name, so that a foreign self, b.release(io.stdout), is
 * refused rather than taken for a handle). */
static lclgc_handle *
lclgc_self(lua_State *L, const char *method)
{
    const char *kind = lua_tostring(L, lua_upvalueindex(1));
    lclgc_handle *h = luaL_testudata(L, 1, kind);

    if (h == NULL) {
        const char *fn = lua_pushfstring(L, "%s:%s", kind, method);

        lua_pushfstring(L, "%s expected", kind);
        lclgc_argerror(L, 1, fn, lua_tostring(L, -1));
    }
    return h;
}

/* Release what a handle holds; idempotent. */
void
lclgc_handle_drop(lclgc_handle *h)
{
    void *obj = h->obj;

    if (obj == NULL)
        return; /* released already: release is idempotent */
    h->obj = NULL;
    if (h->release != NULL)
        (void)h->release(obj);
}

static int
lclgc_handle_release(lua_State *L)
{
    lclgc_handle *h = lclgc_self(L, "release");

    lclgc_handle_drop(h);
    /* A kernel lets go of its arguments with it (lprogram.c): its table
     * may have been finalized already, in the same collection, and a
     * dropped handle is NULL. */
    if (lua_getiuservalue(L, 1, 1) == LUA_TUSERDATA) {
        lclgc_handle *a = luaL_testudata(L, -1, LCLGC_KERNEL_ARGS);

        if (a != NULL)
            lclgc_handle_drop(a);
    }
    return 0;
}

static int
lclgc_handle_tostring(lua_State *L)
{
    lclgc_handle *h = lclgc_self(L, "__tostring");

    if (h->obj == NULL)
        lua_pushfstring(L, "%s (released)",
                        lua_tostring(L, lua_upvalueindex(1)));
    else
        lua_pushfstring(L, "%s (%p)", lua_tostring(L, lua_upvalueindex(1)),
                        h->obj);
    return 1;
}

/* Lua calls __eq with either operand ours: the other may be anything. */
static int
lclgc_handle_eq(lua_State *L)
{
    const char *kind = lua_tostring(L, lua_upvalueindex(1));
    lclgc_handle *a = luaL_testudata(L, 1, kind),
                 *b = luaL_testudata(L, 2, kind);

    lua_pushboolean(L, a != NULL && b != NULL && a->obj != NULL &&
                           a->obj == b->obj);
    return 1;
}

/* A raw pointer to the object, for the generic path (lgeneric.c). */
static int
lclgc_handle_ptr(lua_State *L)
{
    lclgc_handle *h = lclgc_self(L, "ptr");

    if (h->obj == NULL)
        return lclgc_error(L, "%s:ptr: argument #1: the %s has been released",
                           lua_tostring(L, lua_upvalueindex(1)),
                           lua_tostring(L, lua_upvalueindex(1)));
    lua_pushlightuserdata(L, h->obj);
    return 1;
}

static void
lclgc_set_method(lua_State *L, const char *name, const char *field,
                 lua_CFunction f)
{
    lua_pushstring(L, name);
    lua_pushcclosure(L, f, 1);
    lua_setfield(L, -2, field);
}

/* A metatable for handles of one kind: methods, plus release, __gc and
 * __close, all the same idempotent release (as liolib's close). The
 * metatable is protected (__metatable): getmetatable gives false, so no
 * Lua code can call its functions with another self or change them. */
void
lclgc_new_class(lua_State *L, const char *name, const luaL_Reg *methods)
{
    luaL_newmetatable(L, name);
    lua_newtable(L);
    if (methods != NULL)
        luaL_setfuncs(L, methods, 0);
    lclgc_set_method(L, name, "release", lclgc_handle_release);
    lclgc_set_method(L, name, "ptr", lclgc_handle_ptr);
    lua_setfield(L, -2, "__index");
    lclgc_set_method(L, name, "__gc", lclgc_handle_release);
    lclgc_set_method(L, name, "__close", lclgc_handle_release);
    lclgc_set_method(L, name, "__eq", lclgc_handle_eq);
    lclgc_set_method(L, name, "__tostring", lclgc_handle_tostring);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

/* Add methods to the class made by lclgc_new_class. */
void
lclgc_add_methods(lua_State *L, const char *name, const luaL_Reg *methods)
{
    luaL_getmetatable(L, name);
    lua_getfield(L, -1, "__index");
    luaL_setfuncs(L, methods, 0);
    lua_pop(L, 2);
}

static cl_int
lclgc_rel_context(void *o)
{
    return clgc_clReleaseContext(o);
}
static cl_int
lclgc_rel_queue(void *o)
{
    return clgc_clReleaseCommandQueue(o);
}
static cl_int
lclgc_rel_program(void *o)
{
    return clgc_clReleaseProgram(o);
}
static cl_int
lclgc_rel_kernel(void *o)
{
    return clgc_clReleaseKernel(o);
}
static cl_int
lclgc_rel_mem(void *o)
{
    return clgc_clReleaseMemObject(o);
}
static cl_int
lclgc_rel_event(void *o)
{
    return clgc_clReleaseEvent(o);
}
static cl_int
lclgc_rel_sampler(void *o)
{
    return clgc_clReleaseSampler(o);
}
static cl_int
lclgc_rel_kernel_args(void *o)
{
    clgc_kernel_args_free(o);
    return CL_SUCCESS;
}

/* Push a handle of the given kind for obj, taking over one reference. */
void
lclgc_push_handle(lua_State *L, const char *kind, void *obj)
{
    static const struct {
        const char *kind;
        cl_int (*release)(void *);
    } kinds[] = {
        {LCLGC_CONTEXT, lclgc_rel_context},
        {LCLGC_QUEUE, lclgc_rel_queue},
        {LCLGC_PROGRAM, lclgc_rel_program},
        {LCLGC_KERNEL, lclgc_rel_kernel},
        {LCLGC_BUFFER, lclgc_rel_mem},
        {LCLGC_EVENT, lclgc_rel_event},
        {LCLGC_KERNEL_ARGS, lclgc_rel_kernel_args},
        {LCLGC_IMAGE, lclgc_rel_mem},
        {LCLGC_SAMPLER, lclgc_rel_sampler},
    };
    /* A kernel keeps its argument table in its user value (lprogram.c). */
    lclgc_handle *h = lua_newuserdatauv(
        L, sizeof(*h), strcmp(kind, LCLGC_KERNEL) == 0 ? 1 : 0);

    h->obj = NULL; /* until the metatable is on: a __gc must find nothing */
    h->release = NULL;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kinds[i].kind, kind) == 0)
            h->release = kinds[i].release;
    luaL_setmetatable(L, kind);
    h->obj = obj;
}

/* The type of the value at idx as an error message says it: a handle's
 * class name ("clgc.Buffer"), or Lua's type name. */
const char *
lclgc_typename(lua_State *L, int idx)
{
    const char *name = luaL_typename(L, idx);

    if (luaL_getmetafield(L, idx, "__name") == LUA_TSTRING)
        name = lua_tostring(L, -1); /* stays on the stack for the error */
    return name;
}

lclgc_handle *
lclgc_check_handle(lua_State *L, int idx, const char *kind, const char *fn)
{
    lclgc_handle *h = luaL_testudata(L, idx, kind);

    /* A negative index is an element of a table argument. */
    if (h == NULL && idx < 0)
        lclgc_error(L, "%s: a list of %s expected, got an element of type %s",
                    fn, kind, lclgc_typename(L, idx));
    else if (h == NULL)
        lclgc_error(L, "%s: argument #%d: %s expected, got %s", fn, idx, kind,
                    lclgc_typename(L, idx));
    else if (h->obj == NULL && idx < 0)
        lclgc_error(L, "%s: a %s in the list has been released", fn, kind);
    else if (h->obj == NULL)
        lclgc_error(L, "%s: argument #%d: the %s has been released", fn, idx,
                    kind);
    return h;
}

void *
lclgc_check(lua_State *L, int idx, const char *kind, const char *fn)
{
    return lclgc_check_handle(L, idx, kind, fn)->obj;
}

/* ------------------------------------------------------------------------
 * Wait mode: the binding's waits and builds block the thread, as a plain
 * clgc_wait_for_events would, when CLGC_WAIT=blocking or set_wait_mode
 * says so (for comparison: the ticker test forces it). */

static int lclgc_mode = -1;

int
lclgc_blocking(void)
{
    if (__atomic_load_n(&lclgc_mode, __ATOMIC_RELAXED) < 0) {
        const char *env = getenv("CLGC_WAIT");

        __atomic_store_n(&lclgc_mode,
                         env != NULL && strcmp(env, "blocking") == 0,
                         __ATOMIC_RELAXED);
    }
    return __atomic_load_n(&lclgc_mode, __ATOMIC_RELAXED);
}

static int
lclgc_set_wait_mode(lua_State *L)
{
    static const char *const modes[] = {"cooperative", "blocking", NULL};
    int m = lclgc_checkopt(L, 1, NULL, modes, "clgc.set_wait_mode");

    (void)clgc_wait_set_mode(m ? CLGC_WAIT_BLOCKING : CLGC_WAIT_COOPERATIVE);
    __atomic_store_n(&lclgc_mode, m, __ATOMIC_RELAXED);
    return 0;
}

static int
lclgc_get_wait_mode(lua_State *L)
{
    lua_pushstring(L, lclgc_blocking() ? "blocking" : "cooperative");
    return 1;
}

/* ------------------------------------------------------------------------
 * Failures */

/* Report the error value at the top of L (popped) as the failure of the
 * handler `what` of st. */
static void
lclgc_fail_report(lua_State *L, lclgc_state *st, const char *what)
{
    struct lclgc_fail *f = calloc(1, sizeof(*f));

    if (f == NULL) {
        lua_pop(L, 1);
        return; /* no memory to say it in: the failure is lost */
    }
    f->owner = st;
    f->what = what;
    f->code = CLGC_ECALLBACK;
    f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    /* Live before clgc has it: another thread may take it at once. */
    pthread_mutex_lock(&lclgc_lock);
    f->next = lclgc_live;
    lclgc_live = f;
    pthread_mutex_unlock(&lclgc_lock);
    if (clgc_callback_fail(f) == CLGC_OK)
        return;
    /* clgc ran no handler frame here (it runs one for every handler it
     * calls, so this is a defect): deliver it straight to the inbox, as a
     * take would, rather than lose it. */
    pthread_mutex_lock(&lclgc_lock);
    for (struct lclgc_fail **p = &lclgc_live; *p != NULL; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    f->next = NULL;
    *st->inbox_tail = f;
    st->inbox_tail = &f->next;
    pthread_mutex_unlock(&lclgc_lock);
}

/* Take every failure clgc holds and move each to its owner's inbox; a
 * failure that is not ours goes to st, the state that took it. */
static void
lclgc_collect(lclgc_state *st)
{
    clgc_callback_error_t e;

    while (clgc_callback_error_take(&e) == 1) {
        struct lclgc_fail *f = NULL, **p;

        pthread_mutex_lock(&lclgc_lock);
        for (p = &lclgc_live; *p != NULL; p = &(*p)->next)
            if (*p == e.error) {
                f = *p;
                *p = f->next;
                break;
            }
        if (f == NULL && (f = calloc(1, sizeof(*f))) != NULL) {
            f->owner = st;
            f->ref = LUA_NOREF;
            f->what = NULL;
        }
        if (f != NULL) {
            f->command = e.command;
            f->code = e.code;
            f->next = NULL;
            if (f->owner == NULL) {
                free(f); /* its state has closed */
            } else {
                if (f->owner != st)
                    lclgc_routed++;
                *f->owner->inbox_tail = f;
                f->owner->inbox_tail = &f->next;
            }
        }
        pthread_mutex_unlock(&lclgc_lock);
    }
}

/* Raise the oldest failure in the calling state's inbox, if any. */
void
lclgc_raise_failures(lua_State *L, const char *fn)
{
    lclgc_state *st = lclgc_state_get(L);
    struct lclgc_fail *f;

    lclgc_collect(st);
    pthread_mutex_lock(&lclgc_lock);
    f = st->inbox;
    if (f != NULL) {
        st->inbox = f->next;
        if (st->inbox == NULL)
            st->inbox_tail = &st->inbox;
    }
    pthread_mutex_unlock(&lclgc_lock);
    if (f == NULL)
        return;
    if (f->ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
        luaL_unref(L, LUA_REGISTRYINDEX, f->ref);
        if (lua_type(L, -1) == LUA_TSTRING)
            lua_pushfstring(L, "%s: a callback (%s) failed: %s", fn, f->what,
                            lua_tostring(L, -1));
    } else {
        lua_pushfstring(L, "%s: a callback of %s failed: CLGC_%s (%d)", fn,
                        f->command != NULL ? f->command : "a closure",
                        clgc_err_name(f->code), f->code);
    }
    free(f);
    lua_error(L);
}

/* ------------------------------------------------------------------------
 * Posted handlers */

struct lclgc_post *
lclgc_post_new(lua_State *L, int fn_idx, int arg_idx, const char *what)
{
    lclgc_state *st = lclgc_state_get(L);
    struct lclgc_post *p;

    fn_idx = lua_absindex(L, fn_idx);
    arg_idx = arg_idx != 0 ? lua_absindex(L, arg_idx) : 0;
    p = malloc(sizeof(*p));
    if (p == NULL) {
        lclgc_error(L, "%s: out of memory", what);
        return NULL;
    }
    p->st = st;
    p->what = what;
    p->fn_ref = p->arg_ref = LUA_NOREF;
    p->status = CL_SUCCESS;
    st->posts++;
    lua_pushvalue(L, fn_idx);
    p->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (arg_idx != 0) {
        lua_pushvalue(L, arg_idx);
        p->arg_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    return p;
}

/* Drop a post that will never run (its registration failed), on the owner
 * thread. */
void
lclgc_post_free(struct lclgc_post *p)
{
    if (p == NULL)
        return;
    p->st->posts--;
    /* The refs are left to the registry's collection with the state: no
     * lua_State is at hand here in general, and this path is rare. */
    free(p);
}

/* Inside the protection of lclgc_post_run: call the handler, and report
 * its error, if any, as a failure. */
static int
lclgc_post_call(lua_State *L)
{
    struct lclgc_post *p = lua_touserdata(L, 1);
    int nargs = 1;

    lua_rawgeti(L, LUA_REGISTRYINDEX, p->fn_ref);
    lua_pushinteger(L, lua_tointeger(L, 2));
    if (p->arg_ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, p->arg_ref);
        nargs = 2;
    }
    luaL_unref(L, LUA_REGISTRYINDEX, p->fn_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, p->arg_ref);
    p->fn_ref = p->arg_ref = LUA_NOREF;
    if (lua_pcall(L, nargs, 0, 0) != LUA_OK)
        lclgc_fail_report(L, p->st, p->what);
    return 0;
}

/* Run a post in a drain, on the owner thread (or, once its state has
 * closed, only free it). Nothing may unwind from here into clgc: the call
 * is protected, and its own errors are reported as failures. */
void
lclgc_post_run(struct lclgc_post *p, cl_int status)
{
    lclgc_state *st = p->st;
    lua_State *L = st->L;

    st->posts--;
    if (st->dead || L == NULL || !lua_checkstack(L, 4)) {
        free(p);
        return;
    }
    lua_pushcfunction(L, lclgc_post_call);
    lua_pushlightuserdata(L, p);
    lua_pushinteger(L, status);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
        /* Out of memory on the way in or while reporting: say so, as a
         * failure of this state without a value. */
        lua_pushfstring(L, "%s: %s", p->what, lua_tostring(L, -1));
        lua_remove(L, -2);
        lclgc_fail_report(L, st, p->what);
    }
    free(p);
}

/* clgc_queue_post's shape. */
static void
lclgc_post_posted(void *p)
{
    lclgc_post_run(p, ((struct lclgc_post *)p)->status);
}

/* Post p to its state's queue, to run as fn(status, arg) in a later
 * drain. On failure p is freed and clgc's error returned. Owner thread. */
int
lclgc_post_queue(struct lclgc_post *p, cl_int status)
{
    int err;

    p->status = status;
    err = clgc_queue_post(p->st->queue, lclgc_post_posted, p);
    if (err != CLGC_OK)
        lclgc_post_free(p);
    return err;
}

/* ------------------------------------------------------------------------
 * The state and its queue */

static int
lclgc_reap_close(lclgc_state *st)
{
    int err = clgc_queue_close(st->queue);

    if (err != CLGC_OK)
        return err;
    pthread_mutex_destroy(&st->jobs_lock);
    pthread_cond_destroy(&st->jobs_cond);
    free(st);
    return CLGC_OK;
}

/* The queue of a closed state that still had completions promised: drain
 * it (the handlers only free their records) until it closes. */
static void *
lclgc_reaper(void *arg)
{
    lclgc_state *st = arg;
    struct pollfd pfd = {clgc_queue_fd(st->queue), POLLIN, 0};

    for (;;) {
        (void)clgc_queue_drain(st->queue, 0);
        if (lclgc_reap_close(st) == CLGC_OK) {
            __atomic_fetch_sub(&lclgc_reapers, 1, __ATOMIC_RELEASE);
            return NULL;
        }
        (void)poll(&pfd, 1, -1);
    }
}

/* The registry sentinel's __gc: the Lua state is closing. */
static int
lclgc_state_gc(lua_State *L)
{
    lclgc_state **box = lua_touserdata(L, 1);
    lclgc_state *st = *box;
    pthread_t t;
    pthread_attr_t attr;

    if (st == NULL)
        return 0;
    *box = NULL;
    /* Workers post to the queue: it must outlive them. Builds cannot be
     * cut short; timers are only dropped (their handlers never run). */
    pthread_mutex_lock(&st->jobs_lock);
    while (st->jobs > 0)
        pthread_cond_wait(&st->jobs_cond, &st->jobs_lock);
    pthread_mutex_unlock(&st->jobs_lock);
    st->dead = 1;
    lclgc_timers_free(st->timers);
    st->timers = NULL;
    pthread_mutex_lock(&lclgc_lock);
    for (struct lclgc_fail *f = lclgc_live; f != NULL; f = f->next)
        if (f->owner == st)
            f->owner = NULL;
    while (st->inbox != NULL) {
        struct lclgc_fail *f = st->inbox;

        st->inbox = f->next;
        free(f);
    }
    pthread_mutex_unlock(&lclgc_lock);
    if (lclgc_reap_close(st) == CLGC_OK)
        return 0;
    /* Completions are still promised (an event nobody completes, a
     * callback yet to come): a thread of our own waits for them, so that
     * closing the state never blocks on them nor frees what they touch. */
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    __atomic_fetch_add(&lclgc_reapers, 1, __ATOMIC_RELEASE);
    if (pthread_create(&t, &attr, lclgc_reaper, st) != 0) {
        /* No thread: the queue and its record stay for the life of the
         * process rather than be freed under a late completion. */
    }
    pthread_attr_destroy(&attr);
    return 0;
}

lclgc_state *
lclgc_state_get(lua_State *L)
{
    lclgc_state **box, *st;
    int err;

    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &lclgc_state_key) == LUA_TUSERDATA) {
        st = *(lclgc_state **)lua_touserdata(L, -1);
        lua_pop(L, 1);
        if (st == NULL)
            lclgc_error(L, "clgc: the state is closing");
        return st;
    }
    lua_pop(L, 1);
    box = lua_newuserdatauv(L, sizeof(*box), 0);
    *box = NULL;
    lua_newtable(L);
    lua_pushcfunction(L, lclgc_state_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    st = calloc(1, sizeof(*st));
    if (st == NULL) {
        lclgc_error(L, "clgc: out of memory");
        return NULL;
    }
    err = clgc_queue_create(&st->queue);
    if (err != CLGC_OK) {
        free(st);
        lclgc_clgc_error(L, "clgc: clgc_queue_create", err);
        return NULL;
    }
    err = lclgc_timers_init(&st->timers, clgc_queue_fd(st->queue));
    if (err != 0) {
        (void)clgc_queue_close(st->queue);
        free(st);
        lclgc_error(L, "clgc: cannot make the state's timers: %s",
                    strerror(err));
        return NULL;
    }
    pthread_mutex_init(&st->jobs_lock, NULL);
    pthread_cond_init(&st->jobs_cond, NULL);
    st->inbox_tail = &st->inbox;
    *box = st;
    lua_rawsetp(L, LUA_REGISTRYINDEX, &lclgc_state_key);
    return st;
}

clgc_queue_t *
lclgc_state_queue(lclgc_state *st)
{
    return st->queue;
}

/* Drain the calling state's queue on this thread, its expired timers
 * first: up to max handlers (0: all). A handler's own drain is refused, as
 * clgc refuses it. Returns how many ran. */
int
lclgc_drain(lua_State *L, int max, const char *fn)
{
    lclgc_state *st = lclgc_state_get(L);
    lua_State *outer = st->L;
    int n, t;

    if (st->draining)
        return lclgc_error(L, "%s: called from a handler of this state's queue",
                           fn);
    st->L = L;
    st->draining = 1;
    t = lclgc_timers_run(st->timers, max);
    n = max != 0 && t >= max
            ? 0
            : clgc_queue_drain(st->queue, (unsigned)(max != 0 ? max - t : 0));
    st->draining = 0;
    st->L = outer;
    if (n < 0)
        return lclgc_clgc_error(L, fn, n);
    return n + t;
}

/* Whether anything of this state's may be in its queue or still to come:
 * only the binding posts to it. Owner thread. */
int
lclgc_state_pending(lclgc_state *st)
{
    return st->posts > 0;
}

int
lclgc_is_draining(lua_State *L)
{
    return lclgc_state_get(L)->draining;
}

static int
lclgc_l_drain(lua_State *L)
{
    lua_Integer max = lclgc_optint(L, 1, 0, "clgc.drain");
    int n;

    if (max < 0 || max > 1000000000)
        return lclgc_error(L, "clgc.drain: argument #1: max out of range");
    n = lclgc_drain(L, (int)max, "clgc.drain");
    lclgc_raise_failures(L, "clgc.drain");
    lua_pushinteger(L, n);
    return 1;
}

static int
lclgc_l_fd(lua_State *L)
{
    lua_pushinteger(L, lclgc_timers_fd(lclgc_state_get(L)->timers));
    return 1;
}

/* poll(2) the queue's fd: block until it is readable, or for at most
 * timeout seconds (nil, a negative number or math.huge: no bound; NaN is
 * refused, as no wait can be meant by it). Returns whether it is
 * readable. */
static int
lclgc_l_poll(lua_State *L)
{
    lclgc_state *st = lclgc_state_get(L);
    double t = lua_isnoneornil(L, 1) ? -1 : lclgc_checknum(L, 1, "clgc.poll");
    struct pollfd pfd = {lclgc_timers_fd(st->timers), POLLIN, 0};
    int ms, r;

    if (isnan(t))
        return lclgc_error(L, "clgc.poll: argument #1: seconds is NaN");
    ms = t < 0 || t > 1e6 ? -1 : (int)ceil(t * 1000);
    r = poll(&pfd, 1, ms);

    if (r < 0 && errno != EINTR)
        return lclgc_error(L, "clgc.poll: %s", strerror(errno));
    lua_pushboolean(L, r > 0);
    return 1;
}

static void
lclgc_noop(void *p)
{
    ((lclgc_state *)p)->posts--;
}

/* Make the fd readable: an event loop then calls the scheduler. */
static int
lclgc_l_wake(lua_State *L)
{
    lclgc_state *st = lclgc_state_get(L);
    int err = clgc_queue_post(st->queue, lclgc_noop, st);

    if (err != CLGC_OK)
        return lclgc_clgc_error(L, "clgc.wake", err);
    st->posts++;
    return 0;
}

/* post(fn [, arg]): fn(0, arg) in a later drain. */
static int
lclgc_l_post(lua_State *L)
{
    struct lclgc_post *p;
    int err;

    lclgc_checktype(L, 1, LUA_TFUNCTION, "clgc.post");
    p = lclgc_post_new(L, 1, lua_isnoneornil(L, 2) ? 0 : 2, "clgc.post");
    err = lclgc_post_queue(p, CL_SUCCESS);
    if (err != CLGC_OK)
        return lclgc_clgc_error(L, "clgc.post", err);
    return 0;
}

/* ------------------------------------------------------------------------
 * Worker jobs */

static void
lclgc_job_finished(void *arg)
{
    struct lclgc_job *job = arg;

    lclgc_post_run(job->done, job->status);
    job->finish(job);
}

static void *
lclgc_job_main(void *arg)
{
    struct lclgc_job *job = arg;
    lclgc_state *st = job->st;

    job->work(job);
    if (clgc_queue_post(st->queue, lclgc_job_finished, job) != CLGC_OK) {
        /* No memory to post: the handler is lost; free what we can. */
        free(job->done);
        job->lost = 1;
        job->finish(job);
    }
    /* The state may close once this is done: touch nothing after it. */
    pthread_mutex_lock(&st->jobs_lock);
    st->jobs--;
    pthread_cond_broadcast(&st->jobs_cond);
    pthread_mutex_unlock(&st->jobs_lock);
    return NULL;
}

/* Start job->work on a thread of its own; job->done runs in a later drain
 * with job->status, then job->finish(job). On error the job is not
 * started and the caller still owns it (a Lua error is raised). */
int
lclgc_job_start(lua_State *L, struct lclgc_job *job, const char *fn)
{
    lclgc_state *st = lclgc_state_get(L);
    pthread_attr_t attr;
    pthread_t t;
    int err;

    job->st = st;
    pthread_mutex_lock(&st->jobs_lock);
    st->jobs++;
    pthread_mutex_unlock(&st->jobs_lock);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    err = pthread_create(&t, &attr, lclgc_job_main, job);
    pthread_attr_destroy(&attr);
    if (err != 0) {
        pthread_mutex_lock(&st->jobs_lock);
        st->jobs--;
        pthread_mutex_unlock(&st->jobs_lock);
        return lclgc_error(L, "%s: cannot start a thread: %s", fn,
                           strerror(err));
    }
    return 0;
}

/* after(seconds, fn): fn(0) in a drain once seconds have passed. */
static int
lclgc_l_after(lua_State *L)
{
    double t = lclgc_checknum(L, 1, "clgc.after");
    struct lclgc_post *p;

    /* The test is written so that NaN fails it too. */
    if (!(t >= 0 && t <= 1e6))
        return lclgc_error(L, "clgc.after: argument #1: seconds out of "
                              "range (0 to 1e6)");
    lclgc_checktype(L, 2, LUA_TFUNCTION, "clgc.after");
    p = lclgc_post_new(L, 2, 0, "clgc.after");
    if (lclgc_timers_add(lclgc_state_get(L)->timers, t, p) != 0) {
        lclgc_post_free(p);
        return lclgc_error(L, "clgc.after: out of memory");
    }
    return 0;
}

/* methods(class) -> the methods table of a handle class ("clgc.Program"),
 * for clgc.lua to wrap and the tests to sweep. */
static int
lclgc_l_methods(lua_State *L)
{
    if (luaL_getmetatable(L, lclgc_checkstr(L, 1, NULL, "clgc.methods")) !=
        LUA_TTABLE)
        return lclgc_error(L, "clgc.methods: no class '%s'",
                           lua_tostring(L, 1));
    lua_getfield(L, -1, "__index");
    return 1;
}

/* check_events(events, fn): raise fn's error unless events is an Event or
 * a non-empty table of unreleased ones. Returns how many. */
static int
lclgc_l_check_events(lua_State *L)
{
    const char *fn = lclgc_optstr(L, 2, "clgc.wait", "clgc.check_events");
    cl_uint n;

    (void)lclgc_check_events(L, 1, &n, fn);
    if (n == 0)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "no events");
    lua_pushinteger(L, n);
    return 1;
}

/* fail(fn, code, detail): raise the error object of an OpenCL code for
 * the documented function fn, as the C functions do (clgc.lua's own
 * failures). */
static int
lclgc_l_fail(lua_State *L)
{
    const char *fn = lclgc_checkstr(L, 1, NULL, "fail");
    lua_Integer code = lclgc_checkint(L, 2, "fail");
    const char *detail = lclgc_checkstr(L, 3, NULL, "fail");

    if (code < INT32_MIN || code > INT32_MAX)
        return lclgc_error(L, "fail: code out of range");
    return lclgc_fail(L, fn, (int)code, lclgc_cl_name((cl_int)code), NULL, "%s",
                      detail);
}

/* now(): seconds on the monotonic clock, for benchmarks and examples. */
static int
lclgc_l_now(lua_State *L)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
    return 1;
}

/* thread_id(): an integer naming the calling thread, for tests that show
 * where a handler ran. */
static int
lclgc_l_thread_id(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)(uintptr_t)pthread_self());
    return 1;
}

/* failures_routed(): how many failures a state took from clgc for another
 * state, in the process: the test of two states shows that it happened. */
static int
lclgc_l_failures_routed(lua_State *L)
{
    unsigned long n;

    pthread_mutex_lock(&lclgc_lock);
    n = lclgc_routed;
    pthread_mutex_unlock(&lclgc_lock);
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

/* reapers(): how many queues of closed states are still waiting for
 * their promised completions, in the process (for the tests). */
static int
lclgc_l_reapers(lua_State *L)
{
    lua_pushinteger(L, __atomic_load_n(&lclgc_reapers, __ATOMIC_ACQUIRE));
    return 1;
}

static int
lclgc_l_cl_error_name(lua_State *L)
{
    lua_Integer code = lclgc_checkint(L, 1, "clgc.error_name");

    /* A code no cl_int can hold has no name (a cast would make 2^40 0). */
    lua_pushstring(L, code < INT32_MIN || code > INT32_MAX
                          ? "CL_UNKNOWN_ERROR"
                          : lclgc_cl_name((cl_int)code));
    return 1;
}

static const luaL_Reg lclgc_funcs[] = {{"drain", lclgc_l_drain},
                                       {"fd", lclgc_l_fd},
                                       {"poll", lclgc_l_poll},
                                       {"wake", lclgc_l_wake},
                                       {"post", lclgc_l_post},
                                       {"after", lclgc_l_after},
                                       {"set_wait_mode", lclgc_set_wait_mode},
                                       {"wait_mode", lclgc_get_wait_mode},
                                       {"error_name", lclgc_l_cl_error_name},
                                       {"thread_id", lclgc_l_thread_id},
                                       {"now", lclgc_l_now},
                                       {NULL, NULL}};

/* registry["clgc.internal"]: for clgc.lua (methods to wrap, the waits'
 * event check, the halves of a build on a worker) and for the tests
 * (counters of what happened in the process), never in the module's
 * table. */
static const luaL_Reg lclgc_internal[] = {
    {"methods", lclgc_l_methods}, {"check_events", lclgc_l_check_events},
    {"fail", lclgc_l_fail},       {"failures_routed", lclgc_l_failures_routed},
    {"reapers", lclgc_l_reapers}, {NULL, NULL}};

/* The service's own functions: the module table's (below the table on
 * top of the stack) and registry["clgc.internal"]'s. Called by the hub
 * (lmodule.c) while it builds the module. */
void
lclgc_open_core(lua_State *L)
{
    luaL_setfuncs(L, lclgc_funcs, 0);
    lua_pushstring(L, clgc_version());
    lua_setfield(L, -2, "version");
    luaL_newlib(L, lclgc_internal);
    lua_setfield(L, LUA_REGISTRYINDEX, "clgc.internal");
}
