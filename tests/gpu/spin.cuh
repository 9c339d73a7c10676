/*
 * A kernel that keeps its SM busy for a given time of the GPU's global
 * timer (ns), whatever the clocks: the load of the GPU tests.
 */
#ifndef GPUFL_GPU_SPIN_CUH
#define GPUFL_GPU_SPIN_CUH

__global__ void spin(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

#endif
