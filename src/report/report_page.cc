// Style and chart script of the report page (see report_page.h). Chart data fields:
// docs/report.md and LoadReport (report_data.cc).
#include "report/report_page.h"

namespace switchyard::report {

extern const char kReportCss[] = R"CSS(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d5dae1;padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
.sub{color:#5b6675}.verdict{padding:12px 16px;border-radius:6px;margin:12px 0;background:#fff;border-left:6px solid #2e7d32}
.verdict.kept{border-left-color:#f9a825}.verdict.none{border-left-color:#c62828}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(540px,1fr));grid-auto-flow:dense;gap:16px}.wide{grid-column:1/-1}
.card{background:#fff;border:1px solid #dde2e8;border-radius:6px;padding:12px;overflow:auto}
.card p.cap{color:#5b6675;font-size:12.5px;margin:6px 0 0}
table{border-collapse:collapse;background:#fff;font-size:13px;margin:4px 0 12px}
th,td{border:1px solid #dde2e8;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;word-break:break-all}
.s-passed{color:#2e7d32}.s-rejected_accuracy{color:#e65100}.s-build_failed,.s-crashed,.s-timeout{color:#c62828}
.s-duplicate{color:#6d6d6d}.ok{color:#2e7d32}.bad{color:#c62828}
pre{white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px}
.chart-error{color:#c62828;font-weight:600}
)CSS";

extern const char kReportJs[] = R"JS(
(function () {
  'use strict';
  var errors = 0;
  function fail(where, err) {
    errors += 1;
    document.body.setAttribute('data-sy-errors', String(errors));
    console.error('switchyard report: ' + where + ': ' + (err && err.message ? err.message : err));
  }
  window.addEventListener('error', function (e) { fail('script', e.message); });
  var data = JSON.parse(document.getElementById('sy-data').textContent);
  var gate = data.gate;
  var statusColors = {
    domain: ['passed', 'rejected_accuracy', 'build_failed', 'crashed', 'timeout', 'duplicate'],
    range: ['#2e7d32', '#ef6c00', '#c62828', '#8e24aa', '#6d4c41', '#9e9e9e']};
  var measured = data.candidates.filter(function (c) { return c.speedup !== null && c.x !== null; });
  var unmeasured = data.candidates.filter(function (c) { return c.speedup === null; });
  var xScale = {type: 'log'};
  var tip = [{field: 'label', title: 'route'}, {field: 'status'},
             {field: 'speedup', format: '.3f'}, {field: 'ci_low', format: '.3f', title: 'CI low'},
             {field: 'ci_high', format: '.3f', title: 'CI high'},
             {field: 'error', format: '.3e', title: gate.metric}, {field: 'x_note', title: 'note'},
             {field: 'message'}];
  var specs = {};
  specs.pareto = {
    vconcat: [{
      width: 440, height: 300,
      title: {text: 'Measured candidates: speedup vs accuracy error', anchor: 'start'},
      data: {values: measured},
      layer: [
        {mark: {type: 'rule', strokeDash: [6, 4], color: '#c62828'},
         data: {values: [{t: gate.threshold}]}, encoding: {x: {field: 't', type: 'quantitative', scale: xScale}}},
        {mark: {type: 'rule', color: '#9e9e9e'}, data: {values: [{s: 1}]},
         encoding: {y: {field: 's', type: 'quantitative'}}},
        {transform: [{filter: 'datum.pareto'}, {calculate: 'datum.x', as: 'px'}],
         mark: {type: 'line', color: '#1565c0', strokeWidth: 2, point: false},
         encoding: {x: {field: 'px', type: 'quantitative', scale: xScale}, y: {field: 'speedup', type: 'quantitative'}, order: {field: 'px'}}},
        {mark: {type: 'rule', opacity: 0.6},
         encoding: {x: {field: 'x', type: 'quantitative', scale: xScale}, y: {field: 'ci_low', type: 'quantitative'}, y2: {field: 'ci_high'},
                    color: {field: 'status', type: 'nominal', scale: statusColors, legend: null}}},
        {mark: {type: 'point', filled: true, size: 90},
         encoding: {x: {field: 'x', type: 'quantitative', scale: xScale, title: gate.title},
                    y: {field: 'speedup', type: 'quantitative', scale: {type: 'log'}, title: 'speedup vs baseline (x, log scale)'},
                    color: {field: 'status', type: 'nominal', scale: statusColors, title: 'verdict'},
                    shape: {condition: {test: 'datum.pareto', value: 'diamond'}, value: 'circle'},
                    stroke: {condition: {test: 'datum.selected', value: '#000'}, value: null},
                    strokeWidth: {value: 2}, tooltip: tip}}
      ],
      resolve: {scale: {x: 'shared'}}
    }, {
      width: 440, height: 60,
      title: {text: 'Not measured: rejected by the gate (at their error) and failed builds/runs (no outputs)', anchor: 'start', fontSize: 11},
      data: {values: unmeasured.map(function (c) { return Object.assign({}, c, {xs: c.x === null ? null : c.x}); })},
      layer: [
        {mark: {type: 'rule', strokeDash: [6, 4], color: '#c62828'},
         data: {values: [{t: gate.threshold}]}, encoding: {x: {field: 't', type: 'quantitative', scale: xScale}}},
        {transform: [{filter: 'datum.xs !== null'}],
         mark: {type: 'point', filled: true, size: 80},
         encoding: {x: {field: 'xs', type: 'quantitative', scale: xScale, title: gate.title},
                    y: {field: 'status', type: 'nominal', title: null},
                    color: {field: 'status', type: 'nominal', scale: statusColors, legend: null}, tooltip: tip}},
        {transform: [{filter: 'datum.xs === null'}, {aggregate: [{op: 'count', as: 'n'}], groupby: ['status']},
                     {calculate: "datum.n + ' ' + datum.status + ' (no outputs; see the table)'", as: 'txt'}],
         mark: {type: 'text', align: 'left', dx: 4, color: '#c62828'},
         encoding: {y: {field: 'status', type: 'nominal'}, x: {value: 0}, text: {field: 'txt'}}}
      ]
    }],
    resolve: {scale: {x: 'shared'}}
  };
  specs.knobs = {
    data: {values: data.knob_rows},
    hconcat: [{
      title: {text: 'Speedup of the measured candidates, per knob value', anchor: 'start'},
      transform: [{filter: 'datum.speedup !== null'}],
      facet: {row: {field: 'knob', type: 'nominal', title: null}},
      spec: {width: 300, height: 110, layer: [
        {mark: {type: 'rule', color: '#9e9e9e'}, encoding: {y: {datum: 1}}},
        {mark: {type: 'tick', thickness: 3, color: '#1565c0'},
         encoding: {x: {field: 'value', type: 'nominal', title: null}, y: {aggregate: 'median', field: 'speedup', type: 'quantitative'}}},
        {mark: {type: 'point', filled: true, opacity: 0.75, size: 60},
         encoding: {x: {field: 'value', type: 'nominal', title: null},
                    y: {field: 'speedup', type: 'quantitative', scale: {type: 'log'}, title: 'speedup (log)'},
                    color: {field: 'status', type: 'nominal', scale: statusColors, legend: null},
                    tooltip: [{field: 'route'}, {field: 'speedup', format: '.3f'}]}}]},
      resolve: {scale: {x: 'independent'}}
    }, {
      title: {text: 'Verdicts per knob value', anchor: 'start'},
      facet: {row: {field: 'knob', type: 'nominal', title: null}},
      spec: {width: 220, height: 110, mark: 'bar',
             encoding: {x: {field: 'value', type: 'nominal', title: null},
                        y: {aggregate: 'count', type: 'quantitative', title: 'candidates'},
                        color: {field: 'status', type: 'nominal', scale: statusColors, title: 'verdict'},
                        tooltip: [{field: 'status'}, {aggregate: 'count', type: 'quantitative', title: 'candidates'}]}},
      resolve: {scale: {x: 'independent'}}
    }]
  };
  specs.latency = {
    data: {values: data.latency},
    facet: {column: {field: 'source', type: 'nominal', title: null,
                     sort: ['solo run (record)', 'interleaved in the search (database)']}},
    resolve: {scale: {x: 'independent'}},
    spec: {width: 240, height: 240, layer: [
      {mark: {type: 'line', point: {filled: true, size: 70}},
       encoding: {x: {field: 'percentile', type: 'ordinal', sort: ['p50', 'p95', 'p99'], title: 'percentile'},
                  y: {field: 'ms', type: 'quantitative', scale: {type: 'log'}, title: 'latency (ms, log scale)'},
                  color: {field: 'engine', type: 'nominal', scale: {domain: ['baseline', 'selected'], range: ['#757575', '#1565c0']}},
                  strokeDash: {field: 'engine', type: 'nominal', legend: null},
                  tooltip: [{field: 'engine'}, {field: 'percentile'}, {field: 'ms', format: '.4f'}, {field: 'source'}]}}]}
  };
  specs.progress = {
    width: 440, height: 260,
    layer: [
      {data: {values: data.progress},
       mark: {type: 'line', interpolate: 'step-after', point: true},
       encoding: {x: {field: 't', type: 'quantitative', title: 'search time (s)'},
                  y: {field: 'best', type: 'quantitative', scale: {type: 'log'}, title: 'best speedup so far (x, log scale)'},
                  color: {field: 'clock', type: 'nominal', title: 'time axis', legend: {orient: 'bottom'}},
                  tooltip: [{field: 'route', title: 'after'}, {field: 't', format: '.2f'}, {field: 'best', format: '.3f'}]}},
      {data: {values: measured},
       mark: {type: 'point', color: '#9e9e9e', opacity: 0.7},
       encoding: {x: {field: 't_cost_s', type: 'quantitative'}, y: {field: 'speedup', type: 'quantitative'},
                  tooltip: [{field: 'label', title: 'route'}, {field: 'speedup', format: '.3f'}]}}
    ]
  };
  var nodes = document.querySelectorAll('[data-sy-chart]');
  var pending = nodes.length;
  function settle() {
    pending -= 1;
    if (pending === 0) document.body.setAttribute('data-sy-done', String(nodes.length));
  }
  document.body.setAttribute('data-sy-errors', '0');
  Array.prototype.forEach.call(nodes, function (node) {
    var name = node.getAttribute('data-sy-chart');
    try {
      vegaEmbed(node, specs[name], {mode: 'vega-lite', renderer: 'svg', actions: false, logLevel: vega.Warn})
        .then(function () {
          var marks = node.querySelectorAll('svg g.role-mark > *').length;
          node.setAttribute('data-sy-rendered', 'true');
          node.setAttribute('data-sy-marks', String(marks));
          settle();
        })
        .catch(function (e) { node.setAttribute('data-sy-error', String(e)); fail(name, e); settle(); });
    } catch (e) { node.setAttribute('data-sy-error', String(e)); fail(name, e); settle(); }
  });
})();
)JS";

}  // namespace switchyard::report
