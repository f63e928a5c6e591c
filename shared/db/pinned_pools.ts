/**
 * Connections pinned to one organisation. A read for an organisation that has a pool here is one
 * statement on a connection that was opened with the organisation as a start-up setting
 * (`printshop.organization_id`, which the row-level policies read), with no transaction around
 * it: no BEGIN naming the organisation, no COMMIT, no connection reserved and given back. That is
 * what a read cost before the policies; in a transaction of its own, a quote read by id cost the
 * quotes service and PostgreSQL nearly half as much CPU again (README "Pinned reads").
 *
 * Such a connection never serves another organisation, and nothing on it changes the setting: a
 * pool is made for one organisation and ended with it. So there are few of them: `pools`
 * organisations at a time hold one, each of `connections` connections. A place goes to an
 * organisation busy enough to earn it (`warmReads` reads within `idleMs`) while one is free, or
 * once a holder has served no read for `idleMs`; the others read in a transaction of their own, as
 * every organisation can.
 */
import type { Sql } from "./mod.ts";
import type { PoolGauge } from "../metrics.ts";

export interface PinnedPoolLimits {
  /** How many organisations hold a pool at once; 0 turns pinned reads off. */
  pools: number;
  /** The connections of each pool. */
  connections: number;
  /** How long a pool serves no read before its place may go to another organisation. */
  idleMs: number;
  /**
   * How many reads an organisation asks for within one idleMs before it is given a place (1: at
   * its first). A pool costs a connect, a login and a backend: an organisation that reads now and
   * then would pay that at nearly every read, where its reads in transactions cost a tenth of it.
   */
  warmReads: number;
}

/**
 * A pool's connections. One process serves a request at a time and sends its statements without
 * waiting (postgres.js pipelines a busy connection's), so a few connections keep the server's
 * cores busy for one organisation; each more is memory on both sides, and the server's connections
 * are few (README "Connection budget").
 */
export const PINNED_POOL_CONNECTIONS = 4;
/** How long a pool's place is kept for an organisation that has stopped reading. */
export const PINNED_IDLE_MS = 10_000;
/** The reads within PINNED_IDLE_MS that earn an organisation a place: a busy one, not a visitor. */
export const PINNED_WARM_READS = 20;
/** Organisations counted towards a place at once; past it, new ones wait for the next count. */
const MAX_CANDIDATES = 1_000;

/** The limits a service runs with: `pools` organisations (PINNED_READ_POOLS) at a time. */
export function pinnedReadLimits(pools: number): PinnedPoolLimits {
  return {
    pools,
    connections: PINNED_POOL_CONNECTIONS,
    idleMs: PINNED_IDLE_MS,
    warmReads: PINNED_WARM_READS,
  };
}

/** A read's hold on its organisation's pool: `done` once the read is over. */
export interface PinnedLease {
  sql: Sql;
  done(): void;
}

interface Place {
  sql: Sql;
  /** Reads running on it now: a pool is never ended under one. */
  reads: number;
  lastUsed: number;
}

export class PinnedPools {
  readonly #places = new Map<string, Place>();
  readonly #open: (organizationId: string, connections: number) => Sql;
  readonly #limits: PinnedPoolLimits;
  readonly #gauge: PoolGauge;
  readonly #ending = new Set<Promise<void>>();
  /** Reads asked for by organisations without a place, since `#countedSince`. */
  #candidates = new Map<string, number>();
  #countedSince = 0;
  #ended = false;

  constructor(
    open: (organizationId: string, connections: number) => Sql,
    limits: PinnedPoolLimits,
    gauge: PoolGauge,
  ) {
    this.#open = open;
    this.#limits = limits;
    this.#gauge = gauge;
  }

  /** The organisations that hold a pool now (for tests and the metrics). */
  get organizations(): string[] {
    return [...this.#places.keys()];
  }

  /**
   * The organisation's pool for one read, made if there is room; null when there is none (the
   * read then goes the way every read can: a transaction that names the organisation).
   */
  lease(organizationId: string, now: number = Date.now()): PinnedLease | null {
    if (this.#ended) return null;
    let place = this.#places.get(organizationId);
    if (place === undefined) {
      if (!this.#warm(organizationId, now)) return null;
      if (this.#places.size >= this.#limits.pools && !this.#freeOne(now)) return null;
      this.#candidates.delete(organizationId);
      place = {
        sql: this.#open(organizationId, this.#limits.connections),
        reads: 0,
        lastUsed: now,
      };
      this.#places.set(organizationId, place);
    }
    const held = place;
    held.reads++;
    held.lastUsed = now;
    this.#gauge.used++;
    let over = false;
    return {
      sql: held.sql,
      done: () => {
        if (over) return;
        over = true;
        held.reads--;
        // Idle from the end of its last read, however long that read took.
        held.lastUsed = Date.now();
        this.#gauge.used--;
      },
    };
  }

  /** Counts one more read asked for by an organisation without a place: has it earned one? */
  #warm(organizationId: string, now: number): boolean {
    if (this.#limits.warmReads <= 1) return true;
    if (now - this.#countedSince >= this.#limits.idleMs) {
      this.#candidates = new Map();
      this.#countedSince = now;
    }
    const count = (this.#candidates.get(organizationId) ?? 0) + 1;
    if (count >= this.#limits.warmReads) return true;
    if (this.#candidates.has(organizationId) || this.#candidates.size < MAX_CANDIDATES) {
      this.#candidates.set(organizationId, count);
    }
    return false;
  }

  /** Ends the pool that has been idle longest, if one has been for idleMs with no read on it. */
  #freeOne(now: number): boolean {
    let oldest: [string, Place] | undefined;
    for (const entry of this.#places) {
      const [, place] = entry;
      if (place.reads > 0 || now - place.lastUsed < this.#limits.idleMs) continue;
      if (oldest === undefined || place.lastUsed < oldest[1].lastUsed) oldest = entry;
    }
    if (oldest === undefined) return false;
    this.#places.delete(oldest[0]);
    this.#endPool(oldest[1].sql);
    return true;
  }

  #endPool(sql: Sql): void {
    const ending = sql.end({ timeout: 5 }).catch(() => {});
    this.#ending.add(ending);
    void ending.finally(() => this.#ending.delete(ending));
  }

  /** Ends every pool (the main pool's end() calls this): reads still running finish first. */
  async end(options?: { timeout?: number }): Promise<void> {
    this.#ended = true;
    const places = [...this.#places.values()];
    this.#places.clear();
    await Promise.all([
      ...places.map((place) => place.sql.end(options).catch(() => {})),
      ...this.#ending,
    ]);
  }
}
