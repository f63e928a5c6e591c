/**
 * When a client connection has taken too long, and what it is told. Pure: the edge keeps a
 * `ConnectionClock` per connection, and a sweep asks `nextDeadline` whether it has passed.
 */
import { type Refusal, refusal } from "./refusals.ts";

export interface EdgeTimeouts {
  /** From a request head's first byte to its end. */
  headerTimeoutMs: number;
  /** From the end of a request head to the end of its body; and the longest one write may stall. */
  bodyTimeoutMs: number;
  /** With no request in progress and no answer owed. */
  idleTimeoutMs: number;
}

export interface ConnectionClock {
  /**
   * What the client is doing: between requests, sending a head or a body; or, once refused,
   * being given its answer and a moment to read it before the close.
   */
  request: "idle" | "head" | "body" | "closing";
  /** When `request` began. */
  since: number;
  /** Answers the app still owes: requests forwarded whose response has not finished. */
  owed: number;
  /** When `owed` last fell to zero (or the connection opened). */
  idleSince: number;
  /** When the write to the client now in progress began; null when none is. */
  sendingSince: number | null;
}

export type DeadlineReason = "head" | "body" | "idle" | "send" | "closing";

export interface Deadline {
  at: number;
  reason: DeadlineReason;
}

export function newClock(now: number): ConnectionClock {
  return { request: "idle", since: now, owed: 0, idleSince: now, sendingSince: null };
}

/** The earliest deadline the connection is under, or null while it only awaits the app. */
export function nextDeadline(clock: ConnectionClock, timeouts: EdgeTimeouts): Deadline | null {
  let next: Deadline | null = null;
  const consider = (at: number, reason: DeadlineReason): void => {
    if (next === null || at < next.at) next = { at, reason };
  };
  switch (clock.request) {
    case "head":
      consider(clock.since + timeouts.headerTimeoutMs, "head");
      break;
    case "body":
      consider(clock.since + timeouts.bodyTimeoutMs, "body");
      break;
    case "closing":
      consider(clock.since + timeouts.idleTimeoutMs, "closing");
      break;
    case "idle":
      // While an answer is owed the wait is the app's (bounded by PROXY_TIMEOUT_MS), not idling.
      if (clock.owed === 0) {
        consider(Math.max(clock.since, clock.idleSince) + timeouts.idleTimeoutMs, "idle");
      }
      break;
  }
  // A client that stops reading holds the answer, and the connection, for as long as it likes.
  if (clock.sendingSince !== null) consider(clock.sendingSince + timeouts.bodyTimeoutMs, "send");
  return next;
}

/**
 * What a connection whose deadline passed is told before it is closed: a 408 only while nothing
 * else can be on the wire to it (no answer owed for a head; for a body, only the answer to that
 * very request, not yet begun), else nothing; an idle connection is closed silently, as a
 * client racing it with a new request must not read a 408 as that request's answer.
 */
export function expiryAnswer(
  reason: DeadlineReason,
  clock: ConnectionClock,
  answerStarted: boolean,
  timeouts: EdgeTimeouts,
): Refusal | null {
  if (reason === "head" && clock.owed === 0) {
    return refusal(
      "request_timeout",
      `The request head did not arrive within ${timeouts.headerTimeoutMs} ms`,
    );
  }
  if (reason === "body" && clock.owed === 1 && !answerStarted) {
    return refusal(
      "request_timeout",
      `The request body did not arrive within ${timeouts.bodyTimeoutMs} ms`,
    );
  }
  return null;
}

/** How often deadlines are checked: often enough that none overshoots by more than a quarter. */
export function sweepIntervalMs(timeouts: EdgeTimeouts): number {
  const shortest = Math.min(
    timeouts.headerTimeoutMs,
    timeouts.bodyTimeoutMs,
    timeouts.idleTimeoutMs,
  );
  return Math.min(1000, Math.max(10, Math.floor(shortest / 4)));
}
