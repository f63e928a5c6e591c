import assert from "node:assert/strict";
import { ApiError } from "@printshop/shared/http";
import { assertJson, BodyPieces, readLimitedBody } from "./body.ts";

/** A body source that counts how often it is asked for data and whether it was cancelled. */
function countingStream(
  chunks: Iterable<Uint8Array> | "endless",
  chunkSize = 1024,
): { stream: ReadableStream<Uint8Array>; pulls: () => number; cancelled: () => boolean } {
  let pulls = 0;
  let cancelled = false;
  const source = chunks === "endless" ? null : chunks[Symbol.iterator]();
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      if (source === null) {
        controller.enqueue(new Uint8Array(chunkSize).fill(0x61));
        return;
      }
      const next = source.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, pulls: () => pulls, cancelled: () => cancelled };
}

function post(body: BodyInit | null, headers: Record<string, string> = {}): Request {
  return new Request("http://gateway.test/v1/quotes", { method: "POST", body, headers });
}

function isTooLarge(limit: number) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${error}`);
    assert.equal(error.code, "payload_too_large");
    assert.equal(error.status, 413);
    assert.match(error.message, new RegExp(`limit of ${limit} bytes`));
    return true;
  };
}

Deno.test("readLimitedBody() refuses a declared Content-Length over the limit without reading", async () => {
  const body = countingStream("endless");
  await assert.rejects(
    () => readLimitedBody(post(body.stream, { "content-length": "1001" }), 1000),
    isTooLarge(1000),
  );
  assert.equal(body.pulls(), 0, "not a byte was read");
  assert.equal(body.cancelled(), true, "the body was cancelled");
});

Deno.test("readLimitedBody() cuts off an endless body just past the limit and cancels it", async () => {
  const limit = 10_000;
  const chunk = 1024;
  const body = countingStream("endless", chunk);
  await assert.rejects(() => readLimitedBody(post(body.stream), limit), isTooLarge(limit));
  const maxPulls = Math.ceil(limit / chunk) + 1;
  assert.ok(
    body.pulls() <= maxPulls,
    `read ${body.pulls()} chunks (${body.pulls() * chunk} bytes) for a ${limit}-byte limit`,
  );
  assert.equal(body.cancelled(), true, "the stream was cancelled");
});

Deno.test("readLimitedBody() does not trust a Content-Length that understates the body", async () => {
  const body = countingStream("endless", 512);
  await assert.rejects(
    () => readLimitedBody(post(body.stream, { "content-length": "10" }), 2048),
    isTooLarge(2048),
  );
  assert.ok(body.pulls() <= 6, `read ${body.pulls()} chunks`);
  assert.equal(body.cancelled(), true);
});

Deno.test("readLimitedBody() passes a body of exactly the limit, byte for byte", async (t) => {
  const limit = 3000;
  const expected = Uint8Array.from({ length: limit }, (_, i) => i % 251);

  await t.step("streamed in uneven chunks", async () => {
    const chunks = [expected.slice(0, 1), expected.slice(1, 1500), expected.slice(1500)];
    const body = countingStream(chunks);
    const read = await readLimitedBody(post(body.stream), limit);
    assert.deepEqual(read, expected);
    assert.equal(body.cancelled(), false);
  });

  await t.step("with a matching Content-Length", async () => {
    const read = await readLimitedBody(
      post(expected.slice(), { "content-length": String(limit) }),
      limit,
    );
    assert.deepEqual(read, expected);
  });

  await t.step("one byte more is refused", async () => {
    const body = countingStream([expected, new Uint8Array(1)]);
    await assert.rejects(() => readLimitedBody(post(body.stream), limit), isTooLarge(limit));
  });
});

Deno.test("readLimitedBody() gives null for a request without a body and bytes for an empty one", async () => {
  assert.equal(await readLimitedBody(new Request("http://gateway.test/v1/me"), 10), null);
  const empty = await readLimitedBody(post(countingStream([]).stream), 10);
  assert.deepEqual(empty, new Uint8Array(0));
});

Deno.test("assertJson() refuses malformed JSON with invalid_json", async (t) => {
  const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

  await t.step("malformed", () => {
    for (const text of ["{", '{"a":1,}', "nope", "{} {}"]) {
      assert.throws(() => assertJson(bytes(text)), (error: unknown) => {
        assert.ok(error instanceof ApiError, text);
        assert.equal(error.code, "invalid_json");
        assert.equal(error.status, 400);
        return true;
      });
    }
  });

  await t.step("valid JSON and empty bodies pass", () => {
    for (const text of ['{"a":[1,2]}', "[]", "null", "", "  \n"]) {
      assert.doesNotThrow(() => assertJson(bytes(text)), text);
    }
  });
});

Deno.test("readLimitedBody() answers a body cut off mid-way with a 400, not a server fault", async () => {
  let sent = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Deno.errors.BadResource("connection closed"));
      sent = true;
      controller.enqueue(new TextEncoder().encode('{"reference":'));
    },
  });
  const request = new Request("http://x/v1/quotes", { method: "POST", body: stream });
  await assert.rejects(
    readLimitedBody(request, 1024),
    (e: unknown) =>
      e instanceof ApiError && e.status === 400 && /ended before it was complete/.test(e.message),
  );
});

Deno.test("BodyPieces keeps a body trickled in a byte at a time at its own size, not 64 KiB a byte", () => {
  const pieces = new BodyPieces();
  for (let i = 0; i < 100; i++) {
    // What Deno hands over: one byte, in a view of a 64 KiB buffer.
    pieces.add(new Uint8Array(64 * 1024).fill(0x61 + (i % 26)).subarray(0, 1));
  }
  assert.equal(pieces.length, 100);
  assert.ok(pieces.held <= 2 * 100, `${pieces.held} bytes held for 100`);
  assert.equal(new TextDecoder().decode(pieces.bytes()).slice(0, 3), "abc");
  // A piece that fills its buffer is kept as it is, without a copy.
  const whole = new Uint8Array(1024);
  pieces.add(whole);
  assert.equal(pieces.held, 100 + 1024);
});
