import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { IdlePoll, Waker } from "./waker.ts";

Deno.test("IdlePoll doubles the wait while polls find nothing, up to its cap, and starts over", () => {
  const idle = new IdlePoll(1_000, 30_000);
  const waits = Array.from({ length: 7 }, () => idle.next());
  assertEquals(waits, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  idle.reset();
  assertEquals(idle.next(), 1_000, "activity brings the first wait back");
});

Deno.test("IdlePoll never waits less than its first interval, whatever its cap", () => {
  const idle = new IdlePoll(500, 100);
  assertEquals([idle.next(), idle.next()], [500, 500]);
});

Deno.test("Waker.sleep tells a wake from a timeout, and remembers a wake with nobody asleep", async () => {
  const waker = new Waker();
  assertEquals(await waker.sleep(1), false, "ran out");
  const sleeping = waker.sleep(60_000);
  waker.wake();
  assertEquals(await sleeping, true, "cut short");
  waker.wake();
  assertEquals(await waker.sleep(60_000), true, "a wake while busy is not lost");
});

Deno.test("Waker.settle resolves only after a whole round that began after it was asked", async () => {
  const waker = new Waker();
  const rounds: number[] = [];
  let running = true;
  // A loop that is busy when settle() is asked: the round in progress must not count.
  const loop = (async () => {
    let round = 0;
    while (running) {
      rounds.push(++round);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await waker.sleep(60_000);
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 1));
  const askedAt = rounds.length;
  await waker.settle();
  assertEquals(rounds.length > askedAt, true, "a round started after settle() was asked");
  running = false;
  waker.wake();
  await loop;
  const late = waker.settle();
  waker.release();
  await late;
});
