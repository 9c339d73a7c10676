/*
 * What the analyses share with gpufl__analyze_report (ana_report.c): the
 * forms of the scopes, hotspots and ops analyses that take an ana_attr
 * already built, so the report builds the trees once and the hotspots'
 * node indices are the scopes' own.
 */
#ifndef GPUFL_ANALYZE_ANA_INTERNAL_H
#define GPUFL_ANALYZE_ANA_INTERNAL_H

#include "analyze/ana_attr.h"
#include "analyze/analysis.h"

/* Takes x's trees into out (x keeps its lookups, which move). 0 or GPUFL_ENOMEM. */
int gpufl__ana_scopes_with(ana_attr *x, gpufl__ana_scopes *out) __attribute__((warn_unused_result));

/* o: filled options (no zeros). x: built over the same trace. */
int gpufl__ana_hotspots_with(ana_attr *x, const gpufl__ana_options *o, gpufl__ana_hotspots *out)
    __attribute__((warn_unused_result));

/* The ops analysis over x's op rows (x's lookups move). 0 or GPUFL_ENOMEM. */
int gpufl__ana_ops_with(ana_attr *x, gpufl__ana_ops *out) __attribute__((warn_unused_result));

/* o with its zero fields set to the defaults, into *filled. */
void gpufl__ana_options_fill(const gpufl__ana_options *o, gpufl__ana_options *filled);

#endif /* GPUFL_ANALYZE_ANA_INTERNAL_H */
