const handedOut = new Set<number>();

/** Asks the OS for a free TCP port on loopback, never the same one twice in this process. */
export function freePort(): number {
  for (;;) {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const { port } = listener.addr as Deno.NetAddr;
    listener.close();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

export async function canConnect(port: number, hostname = "127.0.0.1"): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname, port });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

export function sleep(ms: number): Promise<void> {
  // A deadline computed as `until - Date.now()` can land a millisecond past zero; clamp it here
  // rather than at every caller (a negative delay warns and is treated as 1 ms anyway).
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Polls until check() is true or the deadline passes. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(intervalMs);
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
}
