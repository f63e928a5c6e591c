import { runService } from "@printshop/shared/service-main";
import { quotesService } from "./app.ts";
import { quotesBackground } from "./background.ts";

await runService({ ...quotesService, background: quotesBackground });
