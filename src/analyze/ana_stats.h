/*
 * The statistics the leak analysis (ana_leaks.c) rests on: a least-squares
 * line, and the two-sided p-value of its slope from Student's t
 * distribution, through the regularized incomplete beta function, written
 * here so that the analyses need nothing beyond libm.
 *
 * Threads: any; no state. Sizes: a fit is O(n) in its points (a few
 * hundred repetitions of a step); the beta function converges in tens of
 * iterations.
 */
#ifndef GPUFL_ANALYZE_ANA_STATS_H
#define GPUFL_ANALYZE_ANA_STATS_H

#include <stddef.h>

/* A line y = intercept + slope * x fitted to n points by least squares. */
typedef struct ana_linfit {
    size_t n;
    double slope, intercept;
    double r_squared; /* share of y's variance the line explains; 0 when y is constant */
    double t;         /* slope / its standard error; infinite for a perfect fit with a slope */
    double p_value;   /* two-sided, Student t with n - 2 degrees of freedom: 1 when y is
                         constant or n < 3 (nothing to test), 0 for a perfect fit with a slope */
} ana_linfit;

/* Fits y[i] against x[i], i < n. Fills *out; never fails (n < 2 or x all
 * equal give slope 0 and p_value 1). */
void gpufl__ana_linfit(const double *x, const double *y, size_t n, ana_linfit *out);

/* The regularized incomplete beta function I_x(a, b), a, b > 0, x in
 * [0, 1]; NaN for arguments outside those ranges. */
double gpufl__ana_betai(double a, double b, double x);

/* P(|T| >= |t|) for T of Student's t distribution with dof degrees of
 * freedom (dof > 0): the two-sided p-value of t. NaN for dof <= 0. */
double gpufl__ana_t_two_sided(double t, double dof);

#endif /* GPUFL_ANALYZE_ANA_STATS_H */
