// queuectl dashboard: a little script on top of pages that read fine
// without it. Text from the server is only ever set as textContent.
"use strict";

// Buttons that cannot be undone ask first. A page whose form is sent is
// leaving for the form's answer, and reloads itself no more: a job page
// that follows its job would, as the button changes the job, and its
// reload could win over the answer (the page with what the action said).
let leaving = false;
document.addEventListener("submit", (e) => {
  const msg = e.target.dataset && e.target.dataset.confirm;
  if (msg && !window.confirm(msg)) {
    e.preventDefault();
    return;
  }
  leaving = true;
});

// The overview refreshes itself: fetch the page again, swap <main>.
const refresh = () => {
  const main = document.querySelector("main[data-refresh]");
  if (!main) return;
  setTimeout(async () => {
    try {
      const r = await fetch(location.href, { headers: { Accept: "text/html" } });
      if (r.ok) {
        const doc = new DOMParser().parseFromString(await r.text(), "text/html");
        const fresh = doc.querySelector("main[data-refresh]");
        if (fresh) document.querySelector("main[data-refresh]").replaceWith(fresh);
      }
    } catch (_) { /* the server went away; try again later */ }
    refresh();
  }, Number(main.dataset.refresh) || 3000);
};
refresh();

// A log opens at its end, where a running job's new lines arrive.
const logText = document.querySelector("#logtext");
if (logText) logText.scrollTop = logText.scrollHeight;

// A running job's page follows its log, unless the reader scrolled up, and
// reloads when the job moves on.
const live = document.querySelector("[data-events]");
if (live && window.EventSource) {
  const es = new EventSource(live.dataset.events);
  es.addEventListener("log", (e) => {
    const atEnd = live.scrollTop + live.clientHeight >= live.scrollHeight - 4;
    live.textContent += JSON.parse(e.data);
    if (atEnd) live.scrollTop = live.scrollHeight;
  });
  es.addEventListener("state", (e) => {
    const s = JSON.parse(e.data);
    if (leaving) {
      es.close();
    } else if (s.state !== live.dataset.state || String(s.run_count) !== live.dataset.runs) {
      es.close();
      location.reload();
    }
  });
  es.addEventListener("end", () => es.close());
}
