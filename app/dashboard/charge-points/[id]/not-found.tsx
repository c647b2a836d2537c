import { NotFoundPanel } from "../../_components/not-found-panel";

export default function ChargePointNotFound() {
  return <NotFoundPanel what="Charge point" backHref="/dashboard/charge-points" backLabel="← All charge points" />;
}
