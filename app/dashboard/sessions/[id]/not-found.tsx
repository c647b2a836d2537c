import { NotFoundPanel } from "../../_components/not-found-panel";

export default function SessionNotFound() {
  return <NotFoundPanel what="Session" backHref="/dashboard/sessions" backLabel="← All sessions" />;
}
