/*
 * A small program recorded by gpufl: a "training" loop with nested phases
 * on the main thread, data-loader threads doing CPU work in their own
 * scopes, and a checkpoint phase measured with a system window. Run it and
 * read what it left in the session directory it prints.
 *
 *     ./demo [LOG_PATH]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gpufl/gpufl.h>

#define LOADERS 3
#define EPOCHS 3
#define STEPS 20

static volatile double sink;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Keeps a CPU busy for `us` microseconds, like decoding a batch would. */
static void cpu_work(unsigned us)
{
    double x = 1.0, end = now_us() + us;
    while (now_us() < end)
        for (int i = 0; i < 100; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

static void *loader(void *arg)
{
    int id = (int)(long)arg;
    for (int batch = 0; batch < EPOCHS * STEPS / LOADERS; batch++) {
        GFL_SCOPE("data/load_batch")
        {
            cpu_work(2000 + 500 * id);
            GFL_SCOPE("data/augment") { cpu_work(800); }
        }
    }
    return NULL;
}

static void train_step(int step)
{
    GFL_SCOPED("train/step");
    GFL_SCOPE("train/forward") { cpu_work(1500); }
    GFL_SCOPE("train/backward") { cpu_work(3000); }
    if (step % 5 == 4)
        GFL_SCOPE("train/optimizer") { cpu_work(700); }
}

int main(int argc, char **argv)
{
    gpufl_options opts;
    gpufl_options_init(&opts);
    opts.app_name = "demo";
    opts.log_path = argc > 1 ? argv[1] : "gpufl-logs";
    opts.system_sample_rate_ms = 20;
    if (!gpufl_init(&opts)) {
        fprintf(stderr, "demo: gpufl_init failed: %s\n", gpufl_last_error());
        return 1;
    }

    pthread_t threads[LOADERS];
    for (long i = 0; i < LOADERS; i++)
        pthread_create(&threads[i], NULL, loader, (void *)i);
    for (int epoch = 0; epoch < EPOCHS; epoch++) {
        GFL_SCOPE("train/epoch")
        {
            for (int step = 0; step < STEPS; step++)
                train_step(step);
        }
        gpufl_system_start("checkpoint");
        cpu_work(20000);
        gpufl_system_stop("checkpoint");
    }
    for (int i = 0; i < LOADERS; i++)
        pthread_join(threads[i], NULL);

    gpufl_shutdown();
    if (gpufl_generate_report(NULL) != 0) {
        fprintf(stderr, "demo: no report: %s\n", gpufl_last_error());
        return 1;
    }
    printf("%s\n", gpufl_session_dir());
    return 0;
}
