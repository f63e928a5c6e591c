/**
 * Debian's HAProxy for the proxy test (e2e/proxy_test.ts): the production front door,
 * proxy/haproxy.cfg, run as it is against a test stack's gateway. `deno task test` installs the
 * package when it is missing and the run is root's, as it does Chromium.
 */
import { canConnect, freePort, waitFor } from "../net.ts";

export const HAPROXY_PATH = "/usr/sbin/haproxy";
/** The configuration compose runs, read by the test from the repository. */
export const HAPROXY_CONFIG = new URL("../../proxy/haproxy.cfg", import.meta.url).pathname;

export function haproxyMissingMessage(): string {
  return `HAProxy is not installed (${HAPROXY_PATH}): run "apt-get update && apt-get install -y haproxy" as root (deno task test does it by itself when run as root)`;
}

export interface RunningHaproxy {
  /** Where clients connect. */
  url: string;
  /** What it logged (one line per request, `option httplog`). */
  output(): string;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts proxy/haproxy.cfg in the foreground in front of `gatewayAddress` ("127.0.0.1:port"),
 * with the variables compose gives it, on a free loopback port.
 */
export async function startHaproxy(
  gatewayAddress: string,
  env: Record<string, string> = {},
): Promise<RunningHaproxy> {
  try {
    await Deno.stat(HAPROXY_PATH);
  } catch {
    throw new Error(haproxyMissingMessage());
  }
  const port = freePort();
  const child = new Deno.Command(HAPROXY_PATH, {
    args: ["-db", "-f", HAPROXY_CONFIG],
    env: {
      PROXY_BIND: `127.0.0.1:${port}`,
      GATEWAY_ADDRESS: gatewayAddress,
      // Two descriptors a connection: within this machine's 20,000 with the test's own.
      PROXY_MAXCONN: "4000",
      PROXY_CONN_PER_IP: "100",
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const collect = async (stream: ReadableStream<Uint8Array>): Promise<void> => {
    for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
  };
  const collected = Promise.all([collect(child.stdout), collect(child.stderr)]);
  const stop = async (): Promise<void> => {
    try {
      child.kill("SIGTERM");
    } catch { /* exited already */ }
    await child.status;
    await collected;
  };
  try {
    await waitFor("HAProxy to listen", () => canConnect(port), 10_000);
  } catch (error) {
    await stop();
    throw new Error(`${error}\n${output}`);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    [Symbol.asyncDispose]: stop,
  };
}
