/*
 * policy.h: the rule engine of workload policies (policy.c): what a
 * policy may say, how the policies of a project's scopes merge, and what
 * the merged policy does to a submission. Pure functions of JSON: no
 * store, no request.
 *
 * A policy is {defaults, rules} for one workload type (enum db_wl_type);
 * for distributed workloads both sit under "worker" (allot's master runs
 * the workers' spec). The fields it may name are policy.c's table.
 */
#ifndef ALLOT_POLICY_H
#define ALLOT_POLICY_H

#include <stddef.h>

#include <jansson.h>

/* One scope's policy in a chain, highest scope first. */
struct pol_layer {
    const char *scope;        /* "tenant", "department" or "project" */
    const char *scope_id;     /* the department's or project's id; "" for the tenant */
    const char *scope_name;   /* its name, for messages; "" for the tenant */
    long long project_seq;    /* a project's number (Run:ai's integer projectId) */
    json_t *policy;           /* {defaults, rules} (borrowed); NULL: none */
};

enum pol_flags {
    POL_DEFAULTS_ONLY = 1,    /* check the defaults against the rules; no required, canEdit */
    POL_PARTIAL = 2           /* a part of a spec (an asset's): a field it leaves out is not
                                 required (the submission may give it) */
};

/* 0 if policy (a {defaults, rules} object) is one allot can honour for
 * type: every field in its table, every value and rule attribute of the
 * field's kind, min <= max; else -1 with why in msg. */
int pol_check_body(json_t *policy, int type, char *msg, size_t len);

/* The effective policy of a chain of n layers (highest scope first), a
 * new {defaults, rules}: each field's rule whole from the highest layer
 * that has one (with its sourceOfRule), each default from the lowest. */
json_t *pol_merge(const struct pol_layer *layers, int n, int type);

/* Applies the chain's effective policy to spec (a submission's spec,
 * changed in place): fills in each default the spec leaves out, then
 * checks each rule (canEdit, required, options, min, max, step). 0, or
 * -1 with msg naming the field, the rule and the scope whose it is. */
int pol_apply(const struct pol_layer *layers, int n, int type, json_t *spec, unsigned flags,
              char *msg, size_t len);

/* Deep-merges patch into policy (both {defaults, rules}); a null in the
 * patch removes that key. 0, -1 if either is not an object. */
int pol_patch(json_t *policy, json_t *patch);

/* Removes the default and the rule of each field path of reset (an array
 * of "compute.gpuDevicesRequest"-style paths); -1 (msg) for a path
 * outside the table. */
int pol_reset(json_t *policy, json_t *reset, int type, char *msg, size_t len);

#endif
