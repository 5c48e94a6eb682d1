"""The HTML report's styles and its one small script (sorting, filtering, opening a linked claim).

The script is inline and allowed by its hash in the page's Content-Security-Policy, so the page
needs no network and runs no other script. Without JavaScript the page still reads top to bottom.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:1.5rem auto;max-width:1280px;
     padding:0 1rem;color:#212121;line-height:1.45;overflow-wrap:break-word}
h1{font-size:1.45rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #e0e0e0}h4{margin:.8rem 0 .3rem}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:.86rem}
th,td{border:1px solid #e0e0e0;padding:.3rem .45rem;text-align:left;vertical-align:top}
th{background:#fafafa}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.fig,td.num,td.link,th{white-space:nowrap}td code{overflow-wrap:anywhere}
#items-table td:first-child{min-width:15rem;max-width:26rem}#items-table td:nth-child(7){min-width:18rem}
th.sortable{cursor:pointer;user-select:none}th.sortable::after{content:" \\2195";color:#9e9e9e}
th[aria-sort=ascending]::after{content:" \\2191";color:#212121}th[aria-sort=descending]::after{content:" \\2193";color:#212121}
.verdict{display:inline-block;padding:0 .45rem;border-radius:.6rem;color:#fff;font-size:.8rem;white-space:nowrap}
blockquote{border-left:4px solid #c62828;margin:.5rem 0;padding:.3rem .8rem;background:#fff5f5}
blockquote.note{border-color:#ef8f00;background:#fff9ef}
dl.run{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;font-size:.9rem}
dl.run dt{font-weight:600}dl.run dd{margin:0}
nav.toc{background:#fafafa;border:1px solid #e0e0e0;padding:.4rem 1rem;font-size:.9rem}
nav.toc ol{margin:.2rem 0;padding-left:1.2rem;columns:2}nav.toc li{break-inside:avoid}
nav.toc ol ol{columns:auto;margin:0;list-style:lower-alpha}
.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin:.5rem 0;font-size:.9rem}
.filters input{min-width:18rem;padding:.2rem .4rem}
details.claim{border:1px solid #e0e0e0;border-radius:.3rem;margin:.35rem 0;padding:.2rem .7rem}
details.claim[open]{background:#fcfcfc}details.claim>summary{cursor:pointer;padding:.2rem 0}
img{max-width:100%;height:auto;border:1px solid #eeeeee}
.charts{display:flex;flex-wrap:wrap;gap:.5rem 1rem;margin:.3rem 0 .6rem}
figure.history{margin:0;width:340px;max-width:100%}figure.history figcaption{font-size:.8rem;overflow-wrap:anywhere}
svg.history-chart{display:block;width:100%;height:auto;background:#fff;border:1px solid #eeeeee}
.chart-key{display:flex;flex-wrap:wrap;gap:.2rem .9rem;font-size:.8rem;color:#424242}
.chart-key span{display:inline-flex;align-items:center;gap:.3rem}
code{font-size:.85rem}.muted{color:#757575}
"""

SCRIPT = """
(function () {
  var table = document.getElementById("items-table");
  if (table) {
    var body = table.tBodies[0], search = document.getElementById("items-filter");
    var verdict = document.getElementById("items-verdict"), shown = document.getElementById("items-shown");
    var rows = function () { return Array.prototype.slice.call(body.rows); };
    var apply = function () {
      var query = search.value.toLowerCase(), wanted = verdict.value, count = 0;
      rows().forEach(function (row) {
        var keep = (!query || row.textContent.toLowerCase().indexOf(query) >= 0) &&
                   (!wanted || row.getAttribute("data-verdict") === wanted);
        row.hidden = !keep;
        if (keep) { count += 1; }
      });
      shown.textContent = String(count);
    };
    search.addEventListener("input", apply);
    verdict.addEventListener("change", apply);
    var key = function (row, column) {
      var cell = row.cells[column];
      return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    };
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (head, column) {
      if (!head.classList.contains("sortable")) { return; }
      var sort = function () {
        var ascending = head.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
        head.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var sorted = rows().sort(function (a, b) {
          var x = key(a, column), y = key(b, column), nx = parseFloat(x), ny = parseFloat(y);
          var order = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
          return ascending ? order : -order;
        });
        sorted.forEach(function (row) { body.appendChild(row); });
      };
      head.addEventListener("click", sort);
      head.addEventListener("keydown", function (event) { if (event.key === "Enter") { sort(); } });
    });
  }
  var open = function () {
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    if (target) { target.scrollIntoView(); }
  };
  window.addEventListener("hashchange", open);
  if (location.hash) { open(); }
})();
"""


def script_hash() -> str:
    """The CSP source allowing exactly :data:`SCRIPT` (``'sha256-...'``)."""
    digest = hashlib.sha256(SCRIPT.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"
