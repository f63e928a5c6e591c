import { runService } from "@printshop/shared/service-main";
import { proofsService } from "./app.ts";
import { startMailWorker } from "./mail_worker.ts";

await runService({
  ...proofsService,
  // Hands queued proof mail to SMTP_URL; without one, sends stay in the local outbox.
  background: async ({ sql, logger, config }) =>
    config.SMTP_URL
      ? await startMailWorker({ sql, logger, smtpUrl: config.SMTP_URL })
      : { stop: () => Promise.resolve() },
});
