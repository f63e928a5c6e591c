import assert from "node:assert/strict";
import { isUuid, uuidv7, uuidv7Time } from "./ids.ts";

const hexDigits = (id: string): string => id.replaceAll("-", "");

Deno.test("uuidv7() has the RFC 9562 layout: version 7, variant 10", () => {
  for (let i = 0; i < 1000; i++) {
    const id = uuidv7();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(id[14], "7", `version nibble of ${id}`);
    const variant = parseInt(id[19]!, 16);
    assert.equal(variant >> 2, 0b10, `variant bits of ${id}`);
  }
});

Deno.test("uuidv7() starts with the creation time in milliseconds", () => {
  const before = Date.now();
  const id = uuidv7();
  const after = Date.now();
  const ms = parseInt(hexDigits(id).slice(0, 12), 16);
  // A burst of ids in one millisecond may borrow the next few milliseconds, never more.
  assert.ok(ms >= before && ms <= after + 5, `${ms} not within [${before}, ${after}]`);
});

Deno.test("uuidv7() is strictly increasing in a tight loop of 10,000", () => {
  const ids: string[] = [];
  for (let i = 0; i < 10_000; i++) ids.push(uuidv7());
  for (let i = 1; i < ids.length; i++) {
    assert.ok(ids[i - 1]! < ids[i]!, `#${i}: ${ids[i - 1]} then ${ids[i]}`);
  }
  assert.equal(new Set(ids).size, ids.length);
});

Deno.test("uuidv7() keeps order when the clock stands still or steps back", () => {
  const now = Date.now();
  const ids = [uuidv7(now), uuidv7(now), uuidv7(now - 5_000), uuidv7(now), uuidv7(now + 1)];
  for (let i = 1; i < ids.length; i++) {
    assert.ok(ids[i - 1]! < ids[i]!, `#${i}: ${ids[i - 1]} then ${ids[i]}`);
  }
});

Deno.test("isUuid() accepts any-version UUIDs in either case and nothing else", () => {
  assert.ok(isUuid(uuidv7()));
  assert.ok(isUuid(crypto.randomUUID()));
  assert.ok(isUuid("0190B1C2-3D4E-7F00-8A00-0000000000AA"));
  for (
    const bad of [
      "",
      "0190b1c23d4e7f008a000000000000aa",
      "{0190b1c2-3d4e-7f00-8a00-0000000000aa}",
      "0190b1c2-3d4e-7f00-8a00-0000000000aa ",
      " 0190b1c2-3d4e-7f00-8a00-0000000000aa",
      "0190b1c2-3d4e-7f00-8a00-0000000000aa\n",
      "0190b1c2-3d4e-7f00-8a00-0000000000a",
      "0190b1c2-3d4e-7f00-8a00-0000000000aaa",
      "0190b1c2-3d4e-7f00-8a00-0000000000ag",
      "urn:uuid:0190b1c2-3d4e-7f00-8a00-0000000000aa",
    ]
  ) {
    assert.equal(isUuid(bad), false, JSON.stringify(bad));
  }
});

Deno.test("uuidv7Time() reads back the creation time, and only from a version 7 id", () => {
  assert.equal(uuidv7Time("018bcfe5-687b-7abc-8def-0123456789ab"), 1_700_000_000_123);
  const now = Date.now();
  const fresh = uuidv7Time(uuidv7());
  assert(fresh !== null && fresh >= now);
  assert.equal(uuidv7Time("018bcfe5-687b-4abc-8def-0123456789ab"), null);
  assert.equal(uuidv7Time("not-a-uuid"), null);
});
