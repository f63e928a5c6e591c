/**
 * A TCP relay on 127.0.0.1 to the PostgreSQL server of `url`, which answers that URL pointed at
 * itself: `pass` carries the bytes between each client and its own connection to the server.
 * Tests put one between a pool and PostgreSQL to watch or change what passes.
 */
export function tcpRelay(
  url: string,
  pass: (client: Deno.Conn, server: Deno.Conn) => Promise<void>,
): { url: string; close(): void } {
  const target = new URL(url);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const sockets: Deno.Conn[] = [];
  (async () => {
    for await (const client of listener) {
      const server = await Deno.connect({ hostname: target.hostname, port: Number(target.port) });
      sockets.push(client, server);
      // Either side going away ends a pass: closing the relay does that to every one.
      pass(client, server).catch(() => {});
    }
  })().catch(() => {});
  const relayed = new URL(url);
  relayed.hostname = "127.0.0.1";
  relayed.port = String((listener.addr as Deno.NetAddr).port);
  return {
    url: relayed.toString(),
    close() {
      listener.close();
      for (const socket of sockets) {
        try {
          socket.close();
        } catch { /* closed already */ }
      }
    },
  };
}
