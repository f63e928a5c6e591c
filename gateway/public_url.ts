/**
 * The gateway's own address as a link would name it, when PUBLIC_URL does not say: the host it
 * binds, or, for a wildcard bind, the machine itself as seen from the machine.
 */
const WILDCARDS = new Set(["0.0.0.0", "::", "[::]", ""]);

export function publicHost(host: string): string {
  if (WILDCARDS.has(host)) return "localhost";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}
