// evokore dashboard: plain JavaScript, no library. The pages are rendered
// on the server; this script adds the text filter on the session list and
// the live approvals (server-sent events, approve and deny). It builds
// DOM nodes with textContent only, never innerHTML, so a hostile tool
// name or argument stays text.
"use strict";

(function () {
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var page = document.body.getAttribute("data-page");

  if (page === "sessions") {
    var box = document.getElementById("text-filter");
    if (box) {
      box.addEventListener("input", function () {
        var q = box.value.toLowerCase();
        document.querySelectorAll("tr.session-row").forEach(function (tr) {
          tr.hidden = q !== "" && tr.getAttribute("data-search").toLowerCase().indexOf(q) < 0;
        });
      });
    }
  }

  if (page !== "approvals") { return; }

  var table = document.getElementById("approvals");
  var body = table.querySelector("tbody");
  var canApprove = table.getAttribute("data-can-approve") === "true";
  var canDeny = table.getAttribute("data-can-deny") === "true";
  var errorBox = document.getElementById("approval-error");

  function when(ms) {
    if (!ms) { return "—"; }
    return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
  }
  function cell(tr, text, cls) {
    var td = document.createElement("td");
    if (cls) { td.className = cls; }
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }
  function button(label, cls, id) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = label;
    b.setAttribute("data-id", id);
    return b;
  }
  function showError(text) {
    errorBox.textContent = text;
    errorBox.hidden = !text;
  }

  function render(view) {
    var sources = document.getElementById("sources");
    sources.replaceChildren();
    view.sources.forEach(function (s) {
      var li = document.createElement("li");
      li.className = s.connected ? "ok" : "down";
      li.textContent = s.name + (s.error ? ": " + s.error : "");
      sources.appendChild(li);
    });
    body.replaceChildren();
    if (view.approvals.length === 0) {
      var tr = document.createElement("tr");
      tr.className = "empty";
      var td = cell(tr, "No pending approvals.", "muted");
      td.colSpan = 9;
      body.appendChild(tr);
      return;
    }
    view.approvals.forEach(function (a) {
      var tr = document.createElement("tr");
      tr.className = "approval";
      tr.setAttribute("data-id", a.id);
      cell(tr, a.toolName, "tool");
      cell(tr, a.arguments || "", "args");
      var idCell = cell(tr, "");
      var code = document.createElement("code");
      code.textContent = a.id;
      idCell.appendChild(code);
      cell(tr, a.session);
      var st = cell(tr, "");
      var span = document.createElement("span");
      span.className = "state state-" + a.state;
      span.textContent = a.state;
      st.appendChild(span);
      cell(tr, when(a.createdAt));
      cell(tr, when(a.expiresAt));
      cell(tr, a.source);
      var actions = cell(tr, "", "actions");
      if (a.state === "pending" && canApprove) { actions.appendChild(button("Approve", "approve", a.id)); }
      if (a.state !== "denied" && canDeny) { actions.appendChild(button("Deny", "deny", a.id)); }
      body.appendChild(tr);
    });
  }

  function decide(verdict, id, btn) {
    btn.disabled = true;
    fetch("/api/approvals/" + verdict, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ id: id })
    }).then(function (res) {
      return res.json().then(function (j) {
        if (!res.ok) { throw new Error(j.error || ("HTTP " + res.status)); }
        showError("");
        document.body.setAttribute("data-last-decision", verdict + ":" + id);
      });
    }).catch(function (err) {
      btn.disabled = false;
      showError(verdict + " " + id + " failed: " + err.message);
    });
  }

  table.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button");
    if (!btn) { return; }
    var id = btn.getAttribute("data-id");
    if (btn.classList.contains("approve")) { decide("approve", id, btn); }
    if (btn.classList.contains("deny")) { decide("deny", id, btn); }
  });

  // EventSource reconnects by itself after a drop.
  var es = new EventSource("/api/approvals/events");
  es.addEventListener("approvals", function (ev) {
    render(JSON.parse(ev.data));
    document.body.setAttribute("data-live", "1");
  });
  es.onerror = function () { document.body.setAttribute("data-live", "0"); };
})();
