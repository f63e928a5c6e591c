/**
 * Connections pinned to one organisation. A read for an organisation that has a pool here is one
 * statement on a connection that was opened with the organisation as a start-up setting
 * (`printshop.organization_id`, which the row-level policies read), with no transaction around
 * it: no BEGIN naming the organisation, no COMMIT, no connection reserved and given back. That is
 * what a read cost before the policies; in a transaction of its own, a quote read by id cost the
 * quotes service and PostgreSQL about a third more CPU (README "Database roles", "Pinned reads").
 *
 * Such a connection never serves another organisation, and nothing on it changes the setting: a
 * pool is made for one organisation and ended with it. So there are few of them: `pools`
 * organisations at a time hold one, each of `connections` connections, taken first come first
 * served; the others read in a transaction of their own, as every organisation could. A pool's
 * place goes to another organisation once it has served no read for `idleMs`.
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

/** The limits a service runs with: `pools` organisations (PINNED_READ_POOLS) at a time. */
export function pinnedReadLimits(pools: number): PinnedPoolLimits {
  return { pools, connections: PINNED_POOL_CONNECTIONS, idleMs: PINNED_IDLE_MS };
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
      if (this.#places.size >= this.#limits.pools && !this.#freeOne(now)) return null;
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
        this.#gauge.used--;
      },
    };
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
