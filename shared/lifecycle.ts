import type { Logger } from "./log.ts";

/** Set by the launcher on every child it starts; see `onShutdown`. */
export const SUPERVISED_ENV = "PRINTSHOP_SUPERVISED";

/**
 * How long a process gives its stop before it exits anyway: within the 5 s a platform allows
 * between SIGINT and SIGKILL (Deno Deploy, and compose's default is 10 s). What it claimed is
 * leased, so work it did not finish is taken up again once the lease lapses.
 */
export const STOP_DEADLINE_MS = 4_500;
/** A step of the stop still running after this long is named in the log. */
export const SLOW_STEP_MS = 1_000;

/** One part of a process's stop, named for the log should it be slow. */
export interface StopStep {
  name: string;
  run: () => Promise<void> | void;
}

/**
 * Runs `steps` in order once, on SIGTERM or SIGINT, and — for a process started by the launcher —
 * when its stdin pipe closes, which happens when the supervisor exits for any reason. A step
 * still running after SLOW_STEP_MS is logged by name ("still stopping"); past `deadlineMs` the
 * process logs what it was waiting for and exits (1) without it.
 */
export function onShutdown(
  steps: readonly StopStep[],
  logger: Logger,
  deadlineMs: number = STOP_DEADLINE_MS,
): void {
  let started = false;
  const run = (): void => {
    if (started) return;
    started = true;
    let current = "starting";
    const deadline = setTimeout(() => {
      logger.warn("stop deadline passed; exiting without waiting further", {
        step: current,
        deadlineMs,
      });
      Deno.exit(1);
    }, deadlineMs);
    (async () => {
      for (const step of steps) {
        current = step.name;
        const slow = setTimeout(
          () => logger.info("still stopping", { step: step.name }),
          SLOW_STEP_MS,
        );
        try {
          await step.run();
        } finally {
          clearTimeout(slow);
        }
      }
    })().then(
      () => {
        clearTimeout(deadline);
        Deno.exit(0);
      },
      (error: unknown) => {
        logger.error("stop failed", { step: current, error: String(error) });
        Deno.exit(1);
      },
    );
  };
  Deno.addSignalListener("SIGTERM", run);
  Deno.addSignalListener("SIGINT", run);
  if (Deno.env.get(SUPERVISED_ENV) === "1") {
    (async () => {
      const buffer = new Uint8Array(64);
      try {
        while ((await Deno.stdin.read(buffer)) !== null) { /* the supervisor never writes */ }
      } catch { /* a broken pipe means the same */ }
      run();
    })();
  }
}

/**
 * Copies a child's output into a file as it arrives. (`pipeTo(file.writable)` holds chunks back
 * until the stream ends, which would leave logs empty while a process runs.)
 */
export async function copyToFile(stream: ReadableStream<Uint8Array>, path: string): Promise<void> {
  using file = await Deno.open(path, { create: true, append: true });
  try {
    for await (const chunk of stream) await file.write(chunk);
  } catch {
    // the child went away mid-write; nothing left to copy
  }
}
