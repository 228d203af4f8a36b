/*
 * sim.c - lct.sim for Python: LMCache's cache simulator at one capacity
 * (lct_sim_new: fed a record at a time, an L1 in front when asked) over a
 * trace's keys, its report as plain dicts and lists that the Python layer
 * makes DataFrames of.  The GIL is released while the trace is read.
 */
#include "lctpy.h"

#include <stdbool.h>

static PyObject *dist_dict(const lct_sim_dist *d)
{
    int last = 64;
    while (last > 0 && !d->bins[last])
        last--;
    PyObject *bins = PyList_New(last + 1);
    for (int i = 0; bins && i <= last; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(d->bins[i]);
        if (!v)
            Py_CLEAR(bins);
        else
            PyList_SET_ITEM(bins, i, v);
    }
    if (!bins)
        return NULL;
    PyObject *out = Py_BuildValue(
        "{sKsdsKsKsKsKsKsKsN}", "count", (unsigned long long)d->count,
        "mean", d->mean, "max", (unsigned long long)d->max, "p25",
        (unsigned long long)d->p25, "p50", (unsigned long long)d->p50,
        "p75", (unsigned long long)d->p75, "p90", (unsigned long long)d->p90,
        "p99", (unsigned long long)d->p99, "log2_bins", bins);
    return out;
}

static PyObject *series_lists(const lct_sim_report *r)
{
    PyObject *calls = PyList_New((Py_ssize_t)r->nseries);
    PyObject *secs = PyList_New((Py_ssize_t)r->nseries);
    PyObject *rate = PyList_New((Py_ssize_t)r->nseries);
    for (size_t i = 0; calls && secs && rate && i < r->nseries; i++) {
        PyList_SET_ITEM(calls, (Py_ssize_t)i,
                        PyLong_FromUnsignedLongLong(r->series[i].calls));
        PyList_SET_ITEM(secs, (Py_ssize_t)i,
                        PyFloat_FromDouble(r->series[i].seconds));
        PyList_SET_ITEM(rate, (Py_ssize_t)i,
                        PyFloat_FromDouble(r->series[i].hit_ratio));
    }
    if (PyErr_Occurred() || !calls || !secs || !rate) {
        Py_XDECREF(calls), Py_XDECREF(secs), Py_XDECREF(rate);
        return NULL;
    }
    return Py_BuildValue("{sNsNsN}", "requests", calls, "t_mono", secs,
                         "token_hit_rate", rate);
}

static PyObject *report_dict(const lct_sim_report *r)
{
    PyObject *dists = Py_BuildValue(
        "{sNsNsNsNsN}", "hit_prefix_chunks", dist_dict(&r->leading),
        "request_chunks", dist_dict(&r->call_positions), "chunk_reuse",
        dist_dict(&r->reuse), "span", dist_dict(&r->span), "lru_position",
        dist_dict(&r->lru_position));
    PyObject *cum = Py_BuildValue(
        "[(Kd)(Kd)(Kd)(Kd)(Kd)]",
        (unsigned long long)r->cumulative_calls[0], r->cumulative[0],
        (unsigned long long)r->cumulative_calls[1], r->cumulative[1],
        (unsigned long long)r->cumulative_calls[2], r->cumulative[2],
        (unsigned long long)r->cumulative_calls[3], r->cumulative[3],
        (unsigned long long)r->cumulative_calls[4], r->cumulative[4]);
    PyObject *pcts = Py_BuildValue("(ddddd)", r->call_hit_p[0],
                                   r->call_hit_p[1], r->call_hit_p[2],
                                   r->call_hit_p[3], r->call_hit_p[4]);
    if (!dists || !cum || !pcts) {
        Py_XDECREF(dists), Py_XDECREF(cum), Py_XDECREF(pcts);
        return NULL;
    }
    return Py_BuildValue(
        "{sKsOsKsKsKsKsKsKsKsKsKsKsKsKsdsKsKsKsKsdsNsNsNsN}", "capacity",
        (unsigned long long)r->capacity, "in_bytes",
        r->in_bytes ? Py_True : Py_False, "capacity_keys",
        (unsigned long long)r->capacity_keys, "key_bytes",
        (unsigned long long)r->key_bytes, "requests",
        (unsigned long long)r->calls, "keys", (unsigned long long)r->keys,
        "keys_hit", (unsigned long long)r->keys_hit, "chunks",
        (unsigned long long)r->positions, "hit_chunks",
        (unsigned long long)r->positions_hit, "tokens_counted",
        (unsigned long long)r->tokens, "hit_tokens_counted",
        (unsigned long long)r->hit_tokens, "occupancy_keys",
        (unsigned long long)r->occupancy_keys, "occupancy_bytes",
        (unsigned long long)r->occupancy_bytes, "evictions",
        (unsigned long long)r->evictions, "mean_key_bytes",
        r->mean_key_bytes, "bypassed", (unsigned long long)r->bypassed,
        "requests_no_hit", (unsigned long long)r->calls_no_hit,
        "requests_all_hit", (unsigned long long)r->calls_all_hit,
        "distinct_keys", (unsigned long long)r->distinct_keys,
        "request_hit_rate_mean", r->call_hit_mean,
        "request_hit_rate_percentiles", pcts, "distributions", dists,
        "cumulative", cum, "series", series_lists(r));
}

static PyObject *l1_dict(const lct_l1_stats *l1)
{
    return Py_BuildValue("{sKsOsKsKsKsKsKsKsK}", "capacity",
                         (unsigned long long)l1->capacity, "in_bytes",
                         l1->in_bytes ? Py_True : Py_False, "keys",
                         (unsigned long long)l1->keys, "keys_hit",
                         (unsigned long long)l1->keys_hit, "chunks",
                         (unsigned long long)l1->positions, "hit_chunks",
                         (unsigned long long)l1->positions_hit, "keys_to_l2",
                         (unsigned long long)l1->keys_to_l2,
                         "writes_through", (unsigned long long)l1->writes,
                         "evictions", (unsigned long long)l1->evictions);
}

/* quotas as lct.sim hands them: a list of (salt, limit); their salts
 * point into the list's str objects, which outlive lct_sim_new. */
static bool take_quotas(PyObject *list, lct_sim_quota **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (list == Py_None)
        return true;
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "quotas: a list of (salt, limit)");
        return false;
    }
    Py_ssize_t len = PyList_GET_SIZE(list);
    if (len == 0)
        return true;
    lct_sim_quota *q = calloc((size_t)len, sizeof *q);
    if (!q) {
        PyErr_NoMemory();
        return false;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        const char *salt;
        Py_ssize_t salt_len;
        unsigned long long limit;
        if (!PyArg_ParseTuple(item, "s#K", &salt, &salt_len, &limit)) {
            free(q);
            return false;
        }
        q[i] = (lct_sim_quota){{salt, (size_t)salt_len}, limit};
    }
    *out = q;
    *n = (size_t)len;
    return true;
}

/* The cache's and the L1's policies by name; false with ValueError. */
static bool find_policies(const char *policy, lct_policy_kind *kind,
                          const char *l1_policy, lct_policy_kind *l1_kind)
{
    const char *bad = policy && lct_policy_find(policy, kind) != LCT_OK
                          ? policy
                      : l1_policy && lct_policy_find(l1_policy, l1_kind) !=
                                         LCT_OK
                          ? l1_policy
                          : NULL;
    if (bad)
        PyErr_Format(PyExc_ValueError, "unknown policy '%s' (known: %s)",
                     bad, lct_policy_names());
    return !bad;
}

PyObject *lctpy_sim(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwnames[] = {"path", "capacity", "in_bytes", "read",
                              "write", "qualname", "since", "until",
                              "wall_since", "wall_until", "lookups_only",
                              "l1_capacity", "l1_in_bytes", "points", "log",
                              "chunk_tokens", "policy", "per_key",
                              "l1_policy", "watermark", "eviction_ratio",
                              "quotas", NULL};
    PyObject *path_obj, *reads = Py_None, *writes = Py_None, *quals = Py_None,
             *since = Py_None, *until = Py_None, *wsince = Py_None,
             *wuntil = Py_None, *log = Py_None, *quota_list = Py_None;
    unsigned long long capacity = 0, l1_capacity = 0, chunk_tokens = 0;
    int in_bytes = 0, lookups_only = 0, l1_bytes = 0, per_key = 0;
    const char *policy = NULL, *l1_policy = NULL;
    unsigned points = 0;
    double watermark = 0, ratio = 0;
    if (!PyArg_ParseTupleAndKeywords(
            args, kw, "O&K|pOOOOOOOpKpIOKzpzddO", kwnames,
            PyUnicode_FSConverter, &path_obj, &capacity, &in_bytes, &reads,
            &writes, &quals, &since, &until, &wsince, &wuntil, &lookups_only,
            &l1_capacity, &l1_bytes, &points, &log, &chunk_tokens, &policy,
            &per_key, &l1_policy, &watermark, &ratio, &quota_list))
        return NULL;
    lct_policy_kind kind = LCT_POLICY_LRU, l1_kind = LCT_POLICY_LRU;
    if (!find_policies(policy, &kind, l1_policy, &l1_kind)) {
        Py_DECREF(path_obj);
        return NULL;
    }
    lct_sim_options o = {.capacity = capacity, .in_bytes = in_bytes,
                         .series_points = points,
                         .chunk_tokens = chunk_tokens,
                         .l1_capacity = l1_capacity, .l1_in_bytes = l1_bytes,
                         .policy = kind, .per_key = per_key,
                         .l1_policy = l1_kind, .watermark = watermark,
                         .eviction_ratio = ratio};
    lct_sim *sim;
    lct_sim_report r;
    lct_error err = {0};
    PyObject *out = NULL;
    lct_sim_quota *quotas = NULL;
    if (!take_quotas(quota_list, &quotas, &o.nquotas)) {
        Py_DECREF(path_obj);
        return NULL;
    }
    o.quotas = quotas;
    lct_status made = lct_sim_new(&o, &sim, &err);
    free(quotas); /* lct_sim_new keeps its own */
    if (made != LCT_OK) {
        Py_DECREF(path_obj);
        PyErr_SetString(PyExc_ValueError, err.message);
        return NULL;
    }
    /* fed a record at a time (the walk releases the GIL): memory grows
     * with the keys, not the references */
    bool ok = lctpy_feed_sim(PyBytes_AS_STRING(path_obj), log, quals, since,
                             until, wsince, wuntil, reads, writes,
                             lookups_only, in_bytes, sim);
    Py_DECREF(path_obj);
    if (ok && lct_sim_finish(sim, &r, &err) != LCT_OK)
        PyErr_SetString(PyExc_MemoryError, err.message);
    else if (ok) {
        out = report_dict(&r);
        PyObject *refused = PyLong_FromUnsignedLongLong(r.refused);
        if (out && (!refused ||
                    PyDict_SetItemString(out, "refused", refused) != 0))
            Py_CLEAR(out);
        Py_XDECREF(refused);
        PyObject *front = out && r.has_l1 ? l1_dict(&r.l1) : NULL;
        if (out && r.has_l1 &&
            (!front || PyDict_SetItemString(out, "l1", front) != 0))
            Py_CLEAR(out);
        Py_XDECREF(front);
        lct_sim_report_free(&r);
    }
    lct_sim_free(sim);
    return out;
}
