/** Set by the launcher on every child it starts; see `onShutdown`. */
export const SUPERVISED_ENV = "PRINTSHOP_SUPERVISED";

/**
 * Runs `stop` once on SIGTERM or SIGINT, and — for a process started by the launcher — when
 * its stdin pipe closes, which happens when the supervisor exits for any reason.
 */
export function onShutdown(stop: () => Promise<void>): void {
  let started = false;
  const run = (): void => {
    if (started) return;
    started = true;
    stop().then(() => Deno.exit(0), () => Deno.exit(1));
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
