"use client";
// A copy button for the re-authorization link: staff paste it into a message to the operator.
// The link is shown beside it too, so it can be selected by hand where the clipboard is refused.
import { useState } from "react";

export function CopyLinkButton({ href }: { href: string }) {
  const [copied, setCopied] = useState<"idle" | "copied" | "refused">("idle");
  return (
    <button
      type="button"
      onClick={() =>
        navigator.clipboard.writeText(href).then(
          () => setCopied("copied"),
          () => setCopied("refused"),
        )
      }
      className="rounded-md border border-amber-400 bg-white px-3 py-1 text-xs font-medium hover:bg-amber-100"
      data-testid="copy-reauth-url"
    >
      {copied === "copied" ? "Copied" : copied === "refused" ? "Copy refused: select the link" : "Copy link"}
    </button>
  );
}
