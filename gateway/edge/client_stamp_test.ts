import assert from "node:assert/strict";
import {
  EDGE_CLIENT_HEADER,
  newEdgeToken,
  stampedClient,
  stampHead,
  stampLine,
} from "./client_stamp.ts";

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

Deno.test("the stamp goes right after the request line, the rest of the head unchanged", () => {
  const head = new TextEncoder().encode("GET /v1/me HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n");
  const stamped = stampHead(head, stampLine("t0k", "203.0.113.9"));
  assert.equal(
    text(stamped),
    `GET /v1/me HTTP/1.1\r\n${EDGE_CLIENT_HEADER}: t0k 203.0.113.9\r\nHost: a\r\nAccept: */*\r\n\r\n`,
  );
  // The head it came from is left as it was (the framer may still hold it).
  assert.equal(text(head), "GET /v1/me HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n");
});

Deno.test("the app believes a stamp with its token only, and the edge's value only", () => {
  const token = newEdgeToken();
  assert.match(token, /^[0-9a-f]{32}$/);
  assert.notEqual(token, newEdgeToken());
  assert.equal(stampedClient(`${token} 203.0.113.9`, token), "203.0.113.9");
  assert.equal(stampedClient(`${token} ::1`, token), "::1");
  // A client's own field of the same name comes after the edge's, joined by the server.
  assert.equal(stampedClient(`${token} 203.0.113.9, 6.6.6.6`, token), "203.0.113.9");
  assert.equal(stampedClient(`${token} 203.0.113.9, ${token} 6.6.6.6`, token), "203.0.113.9");
  // No stamp, another token, a token's prefix, or nothing after the token.
  assert.equal(stampedClient(null, token), null);
  assert.equal(stampedClient("6.6.6.6", token), null);
  assert.equal(stampedClient(`${"0".repeat(32)} 6.6.6.6`, token), null);
  assert.equal(stampedClient(`${token.slice(0, 31)} 6.6.6.6`, token), null);
  assert.equal(stampedClient(`${token}6.6.6.6`, token), null);
  assert.equal(stampedClient(`${token} `, token), null);
  assert.equal(stampedClient(token, token), null);
});
