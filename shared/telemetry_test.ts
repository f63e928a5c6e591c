import assert from "node:assert/strict";
import { batchOrigin, remoteSpanContext } from "./telemetry.ts";

Deno.test("remoteSpanContext() reads a W3C traceparent, and nothing else", () => {
  assert.deepEqual(
    remoteSpanContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
    {
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: 1,
      isRemote: true,
    },
  );
  assert.equal(
    remoteSpanContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.traceFlags,
    0,
  );
  for (
    const bad of [
      null,
      undefined,
      "",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
    ]
  ) assert.equal(remoteSpanContext(bad), null, String(bad));
});

Deno.test("batchOrigin() continues the first event's trace and links the others", () => {
  assert.deepEqual(batchOrigin(["a", "b", null]), { parent: "a", links: ["b", null] });
  assert.deepEqual(batchOrigin([]), { parent: undefined, links: [] });
});
