/*
 * Least squares and Student's t (ana_stats.h).
 *
 * The incomplete beta function is evaluated by its continued fraction
 * (the even and odd terms d_2m = m(b-m)x / ((a+2m-1)(a+2m)) and
 * d_2m+1 = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1))), summed by the modified
 * Lentz method; the fraction converges fast for x < (a+1)/(a+b+2), and
 * the symmetry I_x(a,b) = 1 - I_1-x(b,a) covers the other side.
 */
#include "analyze/ana_stats.h"

#include <float.h>
#include <math.h>

#define CF_MAX_ITER 300
#define CF_EPS 1e-15
#define CF_TINY 1e-300

/* Keeps a Lentz denominator away from zero. */
static double nonzero(double v) { return fabs(v) < CF_TINY ? CF_TINY : v; }

static double beta_cf(double a, double b, double x)
{
    double c = 1.0, d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0)), h = d;
    for (int m = 1; m <= CF_MAX_ITER; m++) {
        double m2 = 2.0 * m;
        double even = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 / nonzero(1.0 + even * d);
        c = nonzero(1.0 + even / c);
        h *= d * c;
        double odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 / nonzero(1.0 + odd * d);
        c = nonzero(1.0 + odd / c);
        double step = d * c;
        h *= step;
        if (fabs(step - 1.0) < CF_EPS)
            break;
    }
    return h;
}

double gpufl__ana_betai(double a, double b, double x)
{
    if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1))
        return NAN;
    if (x == 0 || x == 1)
        return x;
    /* x^a (1-x)^b / B(a, b), in logarithms: the terms overflow alone */
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0))
        return front * beta_cf(a, b, x) / a;
    return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double gpufl__ana_t_two_sided(double t, double dof)
{
    if (!(dof > 0))
        return NAN;
    if (isinf(t))
        return 0.0;
    return gpufl__ana_betai(dof / 2.0, 0.5, dof / (dof + t * t));
}

void gpufl__ana_linfit(const double *x, const double *y, size_t n, ana_linfit *out)
{
    *out = (ana_linfit){.n = n, .p_value = 1.0};
    if (n < 2)
        return;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx <= 0) {
        out->intercept = my;
        return;
    }
    out->slope = sxy / sxx;
    out->intercept = my - out->slope * mx;
    if (syy <= 0)
        return; /* y constant: a flat line, nothing to test */
    /* residuals summed directly: syy - slope * sxy loses every digit when
     * the points lie on the line */
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - (out->intercept + out->slope * x[i]);
        sse += e * e;
    }
    out->r_squared = 1.0 - sse / syy;
    if (out->r_squared < 0)
        out->r_squared = 0;
    if (n < 3)
        return;
    double dof = (double)(n - 2);
    if (sse <= syy * 64 * DBL_EPSILON) { /* on the line, up to rounding */
        out->r_squared = 1.0;
        out->t = out->slope > 0 ? INFINITY : -INFINITY;
        out->p_value = 0.0;
        return;
    }
    out->t = out->slope / sqrt(sse / dof / sxx);
    out->p_value = gpufl__ana_t_two_sided(out->t, dof);
}
