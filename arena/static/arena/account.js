// The account page: copy the API token to the clipboard, and say so.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("copy-token");
  const field = document.getElementById(button ? button.dataset.copies : "");
  const status = document.getElementById("copy-status");
  if (!button || !field) return;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = button.dataset.copied; // (the page's language)
    } catch {
      field.select(); // no clipboard access (an insecure page, say): selected for Ctrl-C
      status.textContent = button.dataset.selected;
    }
  });
});
