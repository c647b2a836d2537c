// What /admin/installs/[id] shows for an id that names no install: neither a row id (uuid) nor the
// service's install_id (the page sends that on to its row).
import Link from "next/link";

export default function InstallNotFound() {
  return (
    <div className="rounded-lg border border-slate-200 bg-white p-6" data-testid="install-not-found">
      <h1 className="text-xl font-semibold">No such install</h1>
      <p className="mt-2 text-slate-600">No install has this id or install_id. Search the list by operator, slug or install_id.</p>
      <Link href="/admin" className="mt-4 inline-block text-brand-700 underline">
        All installs
      </Link>
    </div>
  );
}
