#include "evals/publish/html_page.h"

#include "evals/publish/html_text.h"

namespace evalrun {
namespace {

constexpr const char* kCss = R"CSS(
:root{--fg:#1d2330;--muted:#5d6678;--line:#e4e8ef;--bg:#f5f6f8;--card:#fff;--accent:#2f6db5;
--good:#2e7d32;--good-bg:#e8f5e9;--bad:#c62828;--bad-bg:#fdecea;--warn:#9a5b00;--warn-bg:#fff4e0}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1120px;margin:0 auto;padding:28px 22px 64px}
header h1{font-size:25px;margin:0 0 2px;letter-spacing:-.01em}
header .sub{color:var(--muted)}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 20px 18px;margin:18px 0;
box-shadow:0 1px 2px rgba(20,30,50,.04)}
h2{font-size:17px;margin:0 0 12px}
h3{font-size:14px;margin:18px 0 8px;color:var(--muted);font-weight:600}
table{border-collapse:collapse;width:100%}
.wide{overflow-x:auto;max-width:100%}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:12px;letter-spacing:.02em;white-space:nowrap}
tbody tr:last-child td{border-bottom:none}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.score{font-size:16px;font-weight:650}
.pm{color:var(--muted)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.kv td:first-child{color:var(--muted);width:170px;white-space:nowrap}
.kv td{overflow-wrap:normal}
td code{white-space:nowrap}
table.diff td code{white-space:normal}
table.diff .member{white-space:nowrap}
td.name,td:first-child:not(.detail){white-space:nowrap}
.spread{color:var(--muted);font-size:11.5px;white-space:normal}
.spread span{white-space:nowrap}
table.compact th{white-space:normal}
ol.notes{margin:8px 0 0;padding-left:22px;color:var(--muted);font-size:12.5px}
p,li,h1,h2,h3,.sub{overflow-wrap:anywhere}
pre.cmd{white-space:pre-wrap;overflow-wrap:anywhere;margin:6px 0 0;padding:8px 10px;background:#f7f8fa;
border:1px solid var(--line);border-radius:6px;font-size:12.5px}
@media (max-width:600px){main{padding:16px 8px 40px}section{padding:12px 10px 14px}}
.note{color:var(--muted);font-size:12.5px;margin:10px 0 0}
.grid2{display:grid;grid-template-columns:1fr;gap:8px}
svg.chart{display:block;max-width:760px;height:auto;margin:4px 0 8px}
svg.chart.wide{max-width:960px}
svg .grid{stroke:#e9ecf2;stroke-width:1}
svg .axis{fill:#7a8394;font-size:11px}
svg .label{fill:#2a3140;font-size:12px}
svg .value{fill:#2a3140;font-size:12px;font-weight:600}
svg .track{fill:#eef1f6}
svg .bar{fill:#3f73b5}
ul.plain{margin:6px 0 0;padding-left:18px}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin-bottom:10px}
.controls select,.controls input{font:inherit;padding:5px 8px;border:1px solid #cfd5df;border-radius:6px;background:#fff}
.controls input{flex:1;min-width:220px}
#f-count{color:var(--muted);font-size:12.5px}
table.samples td{font-size:13px}
table.samples tr.srow{cursor:pointer}
table.samples td,table.samples th{padding:6px 8px}
table.compact{width:auto;min-width:420px}
table.compact td,table.compact th{padding-right:22px}
table.samples tr.srow:hover td{background:#f3f6fb}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:11.5px;font-weight:600;line-height:18px}
.b-right{color:var(--good);background:var(--good-bg)}
.b-wrong{color:var(--bad);background:var(--bad-bg)}
.b-partial{color:var(--warn);background:var(--warn-bg)}
.b-cut{color:#5a4a00;background:#fff1b8;margin-left:4px}
td.detail{background:#fafbfc;padding:10px 14px}
td.detail pre{white-space:pre-wrap;word-break:break-word;margin:4px 0 10px;padding:8px 10px;background:#fff;
border:1px solid var(--line);border-radius:6px;max-height:420px;overflow:auto;font-size:12.5px}
td.detail .k{color:var(--muted);font-size:12px;font-weight:600}
button{font:inherit;padding:6px 14px;border:1px solid #cfd5df;border-radius:6px;background:#fff;cursor:pointer;margin-top:10px}
button:hover{background:#f3f6fb}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:24px}
.banner{font-size:16px;font-weight:650;padding:10px 14px;border-radius:8px;margin:0 0 10px}
.banner.bad{color:var(--bad);background:var(--bad-bg)}
.banner.good{color:var(--good);background:var(--good-bg)}
.b-ok{color:var(--good);background:var(--good-bg)}
.b-bad{color:var(--bad);background:var(--bad-bg)}
.b-noise{color:#36506e;background:#e6eef8}
.b-info{color:var(--muted);background:#eef1f6}
svg .zero{stroke:#7a8394;stroke-width:1.2}
svg .band{fill:#e6eef8}
svg .ci{stroke:#3f73b5;stroke-width:2}
svg .ci.bad{stroke:var(--bad)}
svg .ci.good{stroke:var(--good)}
svg .dot{fill:#3f73b5}
svg .dot.bad{fill:var(--bad)}
svg .dot.good{fill:var(--good)}
svg .limit{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:5,3}
svg .limit-text{fill:var(--bad);font-size:11px}
svg .bar.zero-bar{fill:#76b7b2}
svg .bar.noise-bar{fill:#b8c4d6}
)CSS";

}  // namespace

std::string HtmlPageStart(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "script-src 'unsafe-inline'; img-src data:\">\n<title>" +
         HtmlEscape(title) + "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n<main>\n";
}

std::string HtmlPageEnd(const std::string& after_main) {
  return "</main>\n" + after_main + "</body>\n</html>\n";
}

}  // namespace evalrun
