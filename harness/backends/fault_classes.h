/* fault_classes.h — for each CPU mutant of the self-test (mutants.h), the class of cases on
 * which its fault can show: a static rule over a case's shape and regime, the `coverage`
 * report's "fault" rows (which pre-merge cases exercise each class). Whether a case of the
 * class does kill the mutant is for `selftest` to show; a rule here only has to hold for every
 * case that can. */
#ifndef A4W4_FAULT_CLASSES_H
#define A4W4_FAULT_CLASSES_H

#include <stddef.h>

#include "casefile.h"

typedef struct {
    const char *mutant; /* the mutant's name (a4w4_mutant_find) */
    const char *rule;   /* the cases that exercise it, in words */
    int (*exposes)(const a4w4_case *c, const void *arg); /* arg unused (a4w4_case_rule) */
} a4w4_fault_class;

/* The classes, one per CPU mutant, in the mutant table's order; *n their count. */
const a4w4_fault_class *a4w4_fault_classes(size_t *n);

/* The class of mutant `name`, or NULL. */
const a4w4_fault_class *a4w4_fault_class_find(const char *name);

#endif
