import { deployService } from "@printshop/shared/service-main";
import { quotesService } from "./app.ts";
import { quotesBackground } from "./background.ts";

// The Deno Deploy app (README "Deno Deploy"). The cron is registered at the top level, before any
// await: the platform finds crons by evaluating this module.
const app = deployService({ ...quotesService, background: quotesBackground });
Deno.cron("quotes background work", "* * * * *", () => app.tick());
