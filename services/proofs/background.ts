import type { Background, BackgroundDeps } from "@printshop/shared/service-main";
import type { Config } from "./config.ts";
import { startMailWorker } from "./mail_worker.ts";

/** Hands queued proof mail to SMTP_URL; without one, sends stay in the local outbox. */
export async function proofsBackground(
  { sql, logger, config, listen }: BackgroundDeps<Config>,
): Promise<Background> {
  return config.SMTP_URL
    ? await startMailWorker({ sql, logger, smtpUrl: config.SMTP_URL }, { listen })
    : { stop: () => Promise.resolve(), settle: () => Promise.resolve() };
}
