import assert from "node:assert/strict";
import { refusal, refusalResponse } from "./refusals.ts";

function parse(
  response: Uint8Array,
): { status: string; headers: Map<string, string>; body: string } {
  const text = new TextDecoder().decode(response);
  const [head, body] = text.split("\r\n\r\n") as [string, string];
  const [status, ...lines] = head.split("\r\n");
  const headers = new Map(lines.map((line) => {
    const colon = line.indexOf(":");
    return [line.slice(0, colon), line.slice(colon + 1).trim()] as [string, string];
  }));
  return { status: status!, headers, body };
}

Deno.test("refusalResponse is the error envelope, JSON, with Connection: close", () => {
  const { status, headers, body } = parse(
    refusalResponse(refusal("uri_too_long", "Too long"), "req-1", new Date(0)),
  );
  assert.equal(status, "HTTP/1.1 414 URI Too Long");
  assert.equal(headers.get("content-type"), "application/json");
  assert.equal(headers.get("connection"), "close");
  assert.equal(headers.get("x-request-id"), "req-1");
  assert.equal(headers.get("date"), "Thu, 01 Jan 1970 00:00:00 GMT");
  assert.equal(Number(headers.get("content-length")), new TextEncoder().encode(body).length);
  assert.equal(headers.has("retry-after"), false);
  assert.deepEqual(JSON.parse(body), { error: "uri_too_long", message: "Too long", status: false });
});

Deno.test("refusal gives each code its one status; a 503 says when to retry", () => {
  assert.equal(refusal("bad_request", "x").status, 400);
  assert.equal(refusal("request_timeout", "x").status, 408);
  assert.equal(refusal("payload_too_large", "x").status, 413);
  assert.equal(refusal("request_header_fields_too_large", "x").status, 431);
  const shed = parse(refusalResponse(refusal("service_unavailable", "Full"), "r", new Date()));
  assert.equal(shed.status, "HTTP/1.1 503 Service Unavailable");
  assert.equal(shed.headers.get("retry-after"), "1");
});
