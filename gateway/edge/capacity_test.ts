import assert from "node:assert/strict";
import {
  ASSUMED_OPEN_FILE_LIMIT,
  BYTES_PER_CONNECTION,
  capacity,
  DESCRIPTORS_PER_CONNECTION,
  DESCRIPTORS_PER_LINK,
  RESERVED_DESCRIPTORS,
  SHED_SLOTS,
} from "./capacity.ts";

const MB = 1024 * 1024;
const base = { memoryBytes: 1024 * MB, perAddressPercent: 10 };

Deno.test("capacity fits clients and links in the descriptors, keeping the reserve", () => {
  for (const openFileLimit of [1024, 4096, 20_000, 65_536]) {
    const room = capacity({ ...base, openFileLimit });
    assert.equal(room.boundBy, "descriptors");
    const used = room.maxConnections * DESCRIPTORS_PER_CONNECTION +
      room.maxLinks * DESCRIPTORS_PER_LINK + RESERVED_DESCRIPTORS + SHED_SLOTS;
    assert.ok(used <= openFileLimit, `${used} descriptors of ${openFileLimit}`);
    assert.ok(room.maxLinks >= 1);
  }
  // A process allowed 20,000 descriptors holds thousands of idle clients, not the 176 it once
  // did when the limit could not be read and four descriptors were counted per client.
  assert.ok(capacity({ ...base, openFileLimit: 20_000 }).maxConnections > 10_000);
  assert.equal(capacity({ ...base, openFileLimit: 100 }).maxConnections, 1, "never zero");
});

Deno.test("capacity assumes the usual limit only when none is known", () => {
  assert.equal(capacity({ ...base, openFileLimit: null }).openFiles, ASSUMED_OPEN_FILE_LIMIT);
  assert.equal(capacity({ ...base, openFileLimit: 20_000 }).openFiles, 20_000);
});

Deno.test("capacity is bounded by memory: a huge descriptor limit does not invite a million", () => {
  const room = capacity({ ...base, memoryBytes: 64 * MB, openFileLimit: 1_048_576 });
  assert.equal(room.boundBy, "memory");
  assert.equal(room.maxConnections, Math.floor(64 * MB / BYTES_PER_CONNECTION));
});

Deno.test("capacity takes MAX_CONNECTIONS as given, and derives the share and high water", () => {
  const room = capacity({ ...base, openFileLimit: 20_000, configured: 1000 });
  assert.equal(room.boundBy, "configured");
  assert.equal(room.maxConnections, 1000);
  assert.equal(room.maxPerAddress, 100);
  assert.equal(room.highWater, 750);
  // A small cap still lets one client open a browser's worth of connections.
  assert.equal(capacity({ ...base, openFileLimit: 20_000, configured: 100 }).maxPerAddress, 32);
  assert.equal(capacity({ ...base, openFileLimit: 20_000, configured: 4 }).maxPerAddress, 4);
});
