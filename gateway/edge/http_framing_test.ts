import assert from "node:assert/strict";
import fc from "fast-check";
import { ChunkedBody, type RequestEvent, RequestFramer, ResponseFramer } from "./http_framing.ts";

const LIMITS = { maxHeaderBytes: 32_768, maxUrlBytes: 16_384 };
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (data: Uint8Array): string => new TextDecoder().decode(data);

interface Fed {
  /** Event types in order, heads shown as `head METHOD body-kind`. */
  events: string[];
  /** What would be forwarded to the app. */
  forwarded: string;
  refusal?: { status: number; code: string; message: string; during: string };
}

/** Feeds `parts` one push each, as reads from a socket would arrive. */
function feed(parts: (string | Uint8Array)[], framer = new RequestFramer(LIMITS)): Fed {
  const fed: Fed = { events: [], forwarded: "" };
  for (const part of parts) {
    // A push stops where a request ends: the rest is pushed again, as the edge does once the
    // request has its answer.
    let rest = typeof part === "string" ? bytes(part) : part;
    const events: RequestEvent[] = [];
    while (rest.length > 0) {
      const step = framer.push(rest);
      events.push(...step.events);
      if (step.consumed === 0) break;
      rest = rest.subarray(step.consumed);
    }
    for (const event of events) {
      if (event.type === "data") fed.forwarded += text(event.bytes);
      else if (event.type === "head") {
        fed.events.push(`head ${event.head.method} ${event.head.body.kind}`);
      } else if (event.type === "refuse") {
        fed.events.push("refuse");
        fed.refusal = { ...event.refusal, during: event.during };
      } else fed.events.push(event.type);
    }
  }
  return fed;
}

/** Splits `whole` at the given cut points (any order, duplicates allowed). */
function split(whole: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let from = 0;
  for (const point of points) {
    parts.push(whole.slice(from, point));
    from = point;
  }
  parts.push(whole.slice(from));
  return parts.filter((p) => p !== "");
}

const GET = "GET /v1/quotes?limit=20 HTTP/1.1\r\nHost: api.test\r\nX-Api-Key: k\r\n\r\n";
const POST = "POST /v1/quotes HTTP/1.1\r\nHost: api.test\r\nContent-Length: 11\r\n\r\n" +
  '{"a":"bcd"}';
const CHUNKED = "POST /v1/quotes HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\n\r\n" +
  '4\r\n{"a"\r\n7;ext=1\r\n:"bcd"}\r\n0\r\nX-Trailer: 1\r\n\r\n';

Deno.test("RequestFramer passes a request through unchanged and marks its head and end", () => {
  assert.deepEqual(feed([GET]), { events: ["head GET none", "end"], forwarded: GET });
  assert.deepEqual(feed([POST]), { events: ["head POST length", "end"], forwarded: POST });
  assert.deepEqual(feed([CHUNKED]), { events: ["head POST chunked", "end"], forwarded: CHUNKED });
});

Deno.test("RequestFramer frames pipelined requests the same however the bytes are split", () => {
  const stream = GET + POST + CHUNKED + "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n";
  const expected = [
    "head GET none",
    "end",
    "head POST length",
    "end",
    "head POST chunked",
    "end",
    "head HEAD none",
    "end",
  ];
  fc.assert(
    fc.property(fc.array(fc.nat(stream.length), { maxLength: 40 }), (cuts) => {
      const fed = feed(split(stream, cuts));
      assert.deepEqual(fed.events, expected);
      assert.equal(fed.forwarded, stream);
    }),
  );
  // Byte by byte, the hardest split.
  assert.deepEqual(feed(stream.split("")).events, expected);
});

Deno.test("RequestFramer holds a head back until it is complete", () => {
  const framer = new RequestFramer(LIMITS);
  assert.deepEqual(feed(["GET /x HT"], framer), { events: [], forwarded: "" });
  assert.equal(framer.phase, "head");
  assert.deepEqual(feed(["TP/1.1\r\nHost: a\r\n"], framer), { events: [], forwarded: "" });
  const rest = feed(["\r\n"], framer);
  assert.deepEqual(rest, {
    events: ["head GET none", "end"],
    forwarded: "GET /x HTTP/1.1\r\nHost: a\r\n\r\n",
  });
  assert.equal(framer.phase, "idle");
});

Deno.test("RequestFramer reports each phase, and a new serial for each request", () => {
  const framer = new RequestFramer(LIMITS);
  const seen: string[] = [];
  let serial = framer.serial;
  for (const byte of (POST + GET).split("")) {
    framer.push(bytes(byte));
    if (framer.serial !== serial) {
      serial = framer.serial;
      seen.push(framer.phase);
    }
  }
  assert.deepEqual(seen, ["head", "body", "idle", "head", "idle"]);
});

Deno.test("RequestFramer drops blank lines before a request line", () => {
  assert.deepEqual(feed(["\r\n\r\n", GET]), { events: ["head GET none", "end"], forwarded: GET });
});

Deno.test("RequestFramer accepts what Deno's server accepts", () => {
  for (
    const head of [
      "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET http://api.test/v1/me HTTP/1.1\r\nHost: api.test\r\n\r\n",
      "GET /a|b{c}%zz HTTP/1.0\r\n\r\n",
      "GET /\u00e4 HTTP/1.1\r\nHost: a\r\n\r\n",
      "get / HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nX-Tab: a\tb\r\nX-Obs: caf\u00e9\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0003\r\nContent-Length: 0003\r\n\r\nabc",
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n",
      `GET /${"a".repeat(LIMITS.maxUrlBytes - 1)} HTTP/1.1\r\nHost: a\r\n\r\n`,
      `GET / HTTP/1.1\r\nHost: a\r\n${"X: 1\r\n".repeat(99)}\r\n`,
    ]
  ) {
    const fed = feed([head]);
    assert.equal(fed.refusal, undefined, `${head.slice(0, 60)}: ${fed.refusal?.message}`);
    assert.equal(fed.events.at(-1), "end", head.slice(0, 60));
  }
});

Deno.test("RequestFramer refuses what Deno's server would refuse with an empty 400, with a reason", () => {
  const cases: [string, number, string][] = [
    ["POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400, "bad_request"],
    ["POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc", 400, "bad_request"],
    ["POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400, "bad_request"],
    ["POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", 400, "bad_request"],
    [
      "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
      400,
      "bad_request",
    ],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400, "bad_request"],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400, "bad_request"],
    ["POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "bad_request"],
    ["POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 413, "payload_too_large"],
    ["GET / HTTP/1.1\nHost: a\n\n", 400, "bad_request"],
    ["GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", 400, "bad_request"],
    ["GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400, "bad_request"],
    ["GET / HTTP/1.1\r\nX Y: 1\r\n\r\n", 400, "bad_request"],
    ["GET / HTTP/1.1\r\n: 1\r\n\r\n", 400, "bad_request"],
    ["GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400, "bad_request"],
    ["GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n", 400, "bad_request"],
    ["GET / HTTP/1.1\r\nX: a\x7fb\r\n\r\n", 400, "bad_request"],
    ["GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "bad_request"],
    ["GET / HTTP/1.2\r\n\r\n", 400, "bad_request"],
    ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "bad_request"],
    ["GET /\r\n\r\n", 400, "bad_request"],
    ["GET / HTTP/1.1 \r\n\r\n", 400, "bad_request"],
    ["GET  / HTTP/1.1\r\n\r\n", 400, "bad_request"],
    ["G@T / HTTP/1.1\r\n\r\n", 400, "bad_request"],
    ["GET a HTTP/1.1\r\n\r\n", 400, "bad_request"],
    ["CONNECT api.test:443 HTTP/1.1\r\n\r\n", 400, "bad_request"],
    ["CONNECT /v1/me HTTP/1.1\r\nHost: a\r\n\r\n", 400, "bad_request"],
    ["GET /v1/me HTTP/1.1\r\nX-Api-Key: k\r\n\r\n", 400, "bad_request"],
    ["GET /a\x00b HTTP/1.1\r\n\r\n", 400, "bad_request"],
    [`GET / HTTP/1.1\r\n${"X: 1\r\n".repeat(101)}\r\n`, 431, "request_header_fields_too_large"],
    [
      `GET / HTTP/1.1\r\nX: ${"a".repeat(70 * 1024)}\r\n\r\n`,
      431,
      "request_header_fields_too_large",
    ],
    [`GET /${"a".repeat(65 * 1024)} HTTP/1.1\r\n\r\n`, 414, "uri_too_long"],
    [`GET /${"a".repeat(LIMITS.maxUrlBytes)} HTTP/1.1\r\n\r\n`, 414, "uri_too_long"],
  ];
  for (const [head, status, code] of cases) {
    for (const parts of [[head], head.match(/[^]{1,1000}/g)!]) {
      const fed = feed(parts);
      const label = JSON.stringify(head.slice(0, 70));
      assert.equal(fed.refusal?.status, status, `${label}: ${JSON.stringify(fed.refusal)}`);
      assert.equal(fed.refusal?.code, code, label);
      assert.equal(fed.refusal?.during, "head", label);
      assert.equal(fed.forwarded, "", `${label}: nothing of a refused head reaches the app`);
      assert.ok(fed.refusal.message.length > 10, label);
    }
  }
});

Deno.test("RequestFramer refuses an over-long URL or head before the rest of it arrives", () => {
  const framer = new RequestFramer(LIMITS);
  const url = feed(["GET /", "a".repeat(LIMITS.maxUrlBytes + 20)], framer);
  assert.equal(url.refusal?.status, 414, "no need to wait for the end of the line");
  const head = feed([`GET / HTTP/1.1\r\nX: ${"a".repeat(LIMITS.maxHeaderBytes)}`]);
  assert.equal(head.refusal?.status, 431);
  const many = feed([`GET / HTTP/1.1\r\n${"X: 1\r\n".repeat(102)}`]);
  assert.equal(many.refusal?.status, 431);
  const line = feed(["GET / HTTP/1.7\r\nHost: a\r\n"]);
  assert.equal(line.refusal?.status, 400, "a bad request line is refused as soon as it is whole");
});

Deno.test("RequestFramer forwards the requests before a refused one, and nothing after", () => {
  const fed = feed([GET + "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n" + GET]);
  assert.deepEqual(fed.events, ["head GET none", "end", "refuse"]);
  assert.equal(fed.forwarded, GET);
});

Deno.test("RequestFramer refuses a malformed chunked body during the body", () => {
  const head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const body of ["zz\r\nabc\r\n", "3\nabc\n0\n\n", "3\r\nabcd\r\n", "1234567890abcdef\r\n"]) {
    const fed = feed([head, body]);
    assert.equal(fed.refusal?.status, 400, body);
    assert.equal(fed.refusal?.during, "body", body);
    assert.match(fed.refusal!.message, /chunked/, body);
  }
});

Deno.test("ChunkedBody stops exactly at the end of the body, trailers included", () => {
  const body = '3\r\nabc\r\nA; name="x"\r\n0123456789\r\n0\r\nX-A: 1\r\nX-B: 2\r\n\r\n';
  const decoder = new ChunkedBody(1024);
  const input = bytes(body + "NEXT");
  assert.equal(decoder.push(input, 0), body.length);
  assert.equal(decoder.done, true);
  assert.equal(decoder.error, null);
  const trailerLimit = new ChunkedBody(8);
  trailerLimit.push(bytes("0\r\nX-Long-Trailer: 1\r\n\r\n"), 0);
  assert.match(trailerLimit.error ?? "", /trailer/i);
});

/** Counts final responses completed by feeding `parts` to a framer expecting `heads`. */
function completed(heads: boolean[], parts: string[], end = false): number {
  const framer = new ResponseFramer();
  for (const head of heads) framer.expect(head);
  let count = 0;
  for (const part of parts) count += framer.push(bytes(part)).completed;
  if (end) count += framer.end();
  return count;
}

const OK = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 7\r\n\r\n{"a":1}';
const HEAD_OK = "HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n";
const CHUNKED_OK = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
const NO_CONTENT = "HTTP/1.1 204 No Content\r\ndate: x\r\n\r\n";
const CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n";

Deno.test("ResponseFramer counts finished answers however they are split", () => {
  const stream = OK + HEAD_OK + CHUNKED_OK + CONTINUE + NO_CONTENT + OK;
  const heads = [false, true, false, false, false];
  fc.assert(
    fc.property(fc.array(fc.nat(stream.length), { maxLength: 40 }), (cuts) => {
      assert.equal(completed(heads, split(stream, cuts)), 5);
    }),
  );
  assert.equal(completed(heads, stream.split("")), 5);
});

Deno.test("ResponseFramer: a HEAD answer has no body whatever its Content-Length says", () => {
  assert.equal(completed([true], [HEAD_OK]), 1);
  assert.equal(completed([false], [HEAD_OK]), 0, "the same head for a GET waits for 7 bytes");
});

Deno.test("ResponseFramer: an interim 100 is not the answer, and a body to the close ends at the close", () => {
  assert.equal(completed([false], [CONTINUE]), 0);
  const framer = new ResponseFramer();
  framer.expect(false);
  framer.push(bytes(CONTINUE));
  assert.equal(framer.midResponse, false, "nothing of the final answer yet");
  framer.push(bytes("HTTP/1.0 200 OK\r\n"));
  assert.equal(framer.midResponse, true);
  assert.equal(framer.push(bytes("date: x\r\n\r\nabc")).completed, 0);
  assert.equal(framer.end(), 1);
  assert.equal(framer.midResponse, false);
});

Deno.test("ResponseFramer reports a switch of protocols", () => {
  const framer = new ResponseFramer();
  framer.expect(false);
  assert.equal(framer.push(bytes("HTTP/1.1 101 Switching Protocols\r\n\r\n")).upgraded, true);
});
