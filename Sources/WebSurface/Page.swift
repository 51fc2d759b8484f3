/// The page, embedded: no CDN, no network but its own WebSocket. One file of
/// HTML, CSS and JavaScript so every request is one response the gate checked.
enum Page {
    static let tokenForm = """
    <!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
    <title>Carillon — token</title><style>body{font:16px system-ui,sans-serif;background:#111;color:#eee;display:grid;place-items:center;height:90vh}
    input,button{font-size:18px;padding:.5em;border-radius:6px;border:1px solid #555;background:#222;color:#eee}</style></head>
    <body><form method="get" action="/"><p>This Carillon asks for its web token (printed where it was started).</p>
    <input name="token" autocomplete="off" autofocus placeholder="token"> <button>Open</button></form></body></html>
    """

    static let html = """
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8">
    <meta name="viewport" content="width=device-width,initial-scale=1,maximum-scale=1,user-scalable=no">
    <title>Carillon</title>
    <style>
    :root{--bg:#14161a;--panel:#1e2228;--line:#3a414c;--fg:#eef1f4;--dim:#aab3bf;--acc:#f0a030;--on:#3fbf7f;--warn:#e5533d}
    *{box-sizing:border-box}
    html,body{margin:0;background:var(--bg);color:var(--fg);font:14px system-ui,-apple-system,"DejaVu Sans",sans-serif;
      -webkit-user-select:none;user-select:none;touch-action:manipulation}
    header{position:sticky;top:0;z-index:2;background:#0d0f12;border-bottom:1px solid var(--line);padding:6px 10px;
      display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center}
    header h1{font-size:15px;margin:0;font-weight:600}
    .stat{color:var(--dim);font-variant-numeric:tabular-nums}.stat b{color:var(--fg);font-weight:600}
    #conn{width:10px;height:10px;border-radius:50%;background:var(--warn)}#conn.up{background:var(--on)}
    .meter{position:relative;width:120px;height:10px;background:#000;border:1px solid var(--line);border-radius:3px;overflow:hidden}
    .meter i{position:absolute;left:0;top:0;bottom:0;background:linear-gradient(90deg,#3fbf7f 0 70%,#e5c33d 70% 90%,#e5533d 90%)}
    .meter i.rms{opacity:.5;background:#9fd}
    #transport{display:none;gap:8px;align-items:center;padding:8px 10px;background:var(--panel);border-bottom:1px solid var(--line);flex-wrap:wrap}
    #transport.show{display:flex}
    #transport input[type=range]{flex:1;min-width:140px;accent-color:var(--acc);height:28px}
    #transport button,.btn{min-width:44px;min-height:44px;border-radius:8px;border:1px solid var(--line);background:#2a3038;color:var(--fg);font-size:16px}
    #transport button.on{background:var(--acc);color:#000}
    main{display:flex;flex-wrap:wrap;gap:8px;padding:10px;align-items:stretch}
    .group{display:flex;flex-direction:column;gap:6px;background:#181b20;border:1px solid var(--line);border-radius:12px;padding:6px;
      flex:1 1 108px;min-width:108px;max-width:200px}
    .group h2{font-size:13px;margin:0;color:var(--fg);text-align:center;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
    .gbody{display:flex;flex-direction:column;gap:6px;flex:1}
    .with-meter{display:flex;gap:4px;flex:1}.with-meter .w{flex:1}
    .switches{display:flex;flex-direction:column;gap:6px}
    .w.xy{min-width:180px}
    .xy-area{position:relative;width:100%;min-width:160px;aspect-ratio:1;background:#0c0e11;border:1px solid var(--line);
      border-radius:8px;touch-action:none;cursor:crosshair;overflow:hidden}
    .xy-area .dot{position:absolute;width:24px;height:24px;margin:-12px;border-radius:50%;background:var(--acc);pointer-events:none}
    .w.xy.on .dot{background:var(--on);box-shadow:0 0 0 6px rgba(63,191,127,.35)}
    .gmeter{position:relative;width:10px;background:#000;border:1px solid var(--line);border-radius:3px;overflow:hidden}
    .gmeter i{position:absolute;left:0;right:0;bottom:0;background:linear-gradient(0deg,#3fbf7f,#e5c33d 80%,#e5533d)}
    #bar-groups{display:flex;flex-wrap:wrap;gap:8px;padding:0 10px}#bar-groups .group{max-width:none;flex:0 1 auto;flex-direction:row;align-items:center}
    #bar-groups .gbody,#bar-groups .switches{flex-direction:row;flex-wrap:wrap}#bar-groups .w{min-width:92px}
    .w{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:6px;display:flex;flex-direction:column;
      align-items:center;gap:4px;min-height:92px;touch-action:none}
    .w .label{font-size:12px;color:var(--dim);text-align:center;line-height:1.15;max-height:2.4em;overflow:hidden;word-break:break-word}
    .w .value{font-variant-numeric:tabular-nums;font-size:13px;text-align:center;white-space:nowrap}
    .w.pickup .value{color:var(--acc)}
    .w.fader{flex:1}
    .track{position:relative;width:44px;flex:1;min-height:150px;background:#0c0e11;border:1px solid var(--line);border-radius:6px;cursor:ns-resize}
    .track .fill{position:absolute;left:0;right:0;bottom:0;background:linear-gradient(0deg,#a86a10,var(--acc));border-radius:5px}
    .track .cap{position:absolute;left:-6px;right:-6px;height:14px;margin-bottom:-7px;background:#dde2e8;border-radius:3px}
    .dial{width:64px;height:64px;border-radius:50%;cursor:ns-resize;
      background:conic-gradient(from 225deg,var(--acc) calc(var(--p)*270deg),#0c0e11 0 270deg,transparent 0);
      display:grid;place-items:center}
    .dial::after{content:"";width:44px;height:44px;border-radius:50%;background:var(--panel)}
    .dial.encoder{background:conic-gradient(from calc(var(--p)*360deg),var(--acc) 0 20deg,#0c0e11 0)}
    /* A switch is its button, named (as a hardware S/M/R key is), its state its colour and aria-pressed. */
    .w.toggle,.w.button,.w.momentary{min-height:0;padding:4px}
    .w.toggle>.label,.w.button>.label,.w.momentary>.label,.w.toggle>.value,.w.button>.value,.w.momentary>.value{display:none}
    .press{width:100%;flex:1;min-height:44px;border-radius:8px;border:1px solid var(--line);background:#2a3038;color:var(--fg);font-size:13px}
    .press.on{background:var(--on);color:#000}
    .pad .press{min-height:64px}.pad .press.on{background:var(--acc)}
    .sel{display:flex;flex-wrap:wrap;gap:3px;justify-content:center}
    .sel button{min-width:44px;min-height:44px;border-radius:6px;border:1px solid var(--line);background:#2a3038;color:var(--fg)}
    .sel button.on{background:var(--acc);color:#000}
    .w.readout .value{font-size:18px;margin:auto}
    .empty{color:var(--dim);padding:20px}
    #strips{display:none;gap:3px;padding:4px 10px;height:34px}#strips.show{display:flex}
    #strips .strip{flex:1;background:#111;border-radius:2px;position:relative;overflow:hidden}
    #strips .strip i{position:absolute;bottom:0;left:0;right:0;background:var(--acc)}
    #spectrum{display:none;gap:1px;padding:4px 10px;height:40px}#spectrum.show{display:flex}
    #spectrum i{flex:1;align-self:flex-end;background:#9fd;min-height:1px}
    /* The rig: the current scene, its zones as range bars over a 128-key keyboard (C-1…G9), layers stacked. */
    #rig{padding:6px 10px;border-bottom:1px solid var(--line)}#rig[hidden]{display:none}
    #rig-head{display:flex;flex-wrap:wrap;gap:6px 12px;align-items:center;margin-bottom:6px}
    #rig-head h2{font-size:13px;margin:0;font-weight:600}
    #scene-buttons{display:flex;flex-wrap:wrap;gap:4px}
    #scene-buttons button{min-width:44px;min-height:44px;padding:0 12px;border-radius:8px;border:1px solid var(--line);background:#2a3038;color:var(--fg);font-size:13px}
    #scene-buttons button.on{background:var(--acc);color:#000}
    #zones{position:relative;list-style:none;margin:0;padding:0}
    #zones .zone{position:absolute;height:30px;box-sizing:border-box;padding:0 6px;border-radius:6px;overflow:hidden;white-space:nowrap;
      text-overflow:ellipsis;font-size:12px;line-height:28px;color:#fff;background:hsl(var(--hue),42%,26%);border:1px solid hsl(var(--hue),45%,55%)}
    #zones .zone b{font-weight:600}
    #zones .none{color:var(--dim);font-size:13px;line-height:30px}
    #keyboard{position:relative;height:44px;margin-top:4px;background:#0c0e11;border-radius:4px;overflow:hidden}
    #keyboard .wk{position:absolute;top:0;bottom:0;background:#dde2e8;border-right:1px solid #6b7380}
    #keyboard .wk.in{background:#f6d9a8}
    #keyboard .bk{position:absolute;top:0;height:58%;background:#111;border-radius:0 0 2px 2px;z-index:1}
    #keyboard .oct{position:absolute;bottom:1px;z-index:2;font-size:9px;color:#222;padding-left:1px;pointer-events:none}
    /* The channel strips' sounds: each channel's preset, and a picker searchable by name, grouped by GM class. */
    #sounds{padding:6px 10px;border-bottom:1px solid var(--line)}#sounds[hidden]{display:none}
    #sounds h2{font-size:13px;margin:0;font-weight:600}
    #sounds-head{display:flex;flex-wrap:wrap;gap:6px 12px;align-items:center;margin-bottom:6px}
    #save-scene{display:flex;gap:6px}
    #save-name{font-size:16px;min-height:44px;width:11em;padding:0 10px;border-radius:8px;border:1px solid var(--line);background:#0c0e11;color:var(--fg)}
    #save-button{padding:0 12px;font-size:13px}
    #sound-list{display:flex;flex-wrap:wrap;gap:6px;list-style:none;margin:0;padding:0}
    #sound-list li{display:flex}
    .sound{display:flex;align-items:center;gap:8px;min-height:44px;min-width:44px;padding:4px 10px;border-radius:8px;border:1px solid var(--line);
      background:#2a3038;color:var(--fg);font-size:13px;text-align:left}
    .sound .ch{color:var(--dim);font-variant-numeric:tabular-nums}.sound .bp{color:var(--dim);font-variant-numeric:tabular-nums;font-size:12px}
    .gpreset{min-height:44px;border-radius:8px;border:1px solid var(--line);background:#2a3038;color:var(--fg);font-size:12px;
      white-space:nowrap;overflow:hidden;text-overflow:ellipsis;padding:0 6px}
    #picker{position:fixed;inset:0;z-index:5;background:rgba(0,0,0,.6);display:flex;align-items:flex-start;justify-content:center;padding:4vh 8px}
    #picker[hidden]{display:none}
    #picker .panel{background:var(--panel);border:1px solid var(--line);border-radius:12px;width:min(680px,100%);max-height:92vh;display:flex;flex-direction:column}
    #picker .top{display:flex;gap:8px;align-items:center;padding:8px;border-bottom:1px solid var(--line)}
    #picker h2{font-size:14px;margin:0;flex:1}
    #picker input{font-size:16px;min-height:44px;padding:0 10px;border-radius:8px;border:1px solid var(--line);background:#0c0e11;color:var(--fg);width:100%}
    #picker .search{padding:8px}
    #preset-list{overflow-y:auto;padding:0 8px 8px}
    #preset-list h3{font-size:12px;color:var(--dim);margin:10px 0 4px;font-weight:600}
    #preset-list .presets{display:flex;flex-wrap:wrap;gap:4px}
    #preset-list button{min-height:44px;min-width:44px;padding:0 10px;border-radius:6px;border:1px solid var(--line);background:#2a3038;color:var(--fg);font-size:13px}
    #preset-list button.on{background:var(--acc);color:#000}
    #preset-list .bp{font-size:11px;opacity:.8;margin-left:4px}
    #preset-list .none{color:var(--dim);padding:10px 0}
    /* Phone, portrait: each group a row, swiped sideways. */
    @media (orientation:portrait) and (max-width:600px){main{flex-direction:column}
      .group{max-width:none;flex:none;flex-direction:row;align-items:stretch}
      .group h2{writing-mode:vertical-rl;transform:rotate(180deg);flex:none}
      .gbody{flex-direction:row;overflow-x:auto;scroll-snap-type:x mandatory}.gbody>*{flex:none;scroll-snap-align:start}
      .gbody>.w,.switches .w,.with-meter .w{width:96px}.switches{justify-content:center}.track{min-height:120px}.w.fader{min-height:190px}}
    @media (orientation:landscape) and (min-width:900px){.track{min-height:160px}}
    </style></head>
    <body>
    <header><span id="conn" title="connection"></span><h1 id="title">Carillon</h1><span class="stat" id="conn-text" role="status" aria-live="polite"></span>
      <span class="stat">load <b id="load">–</b></span><span class="stat">xruns <b id="xruns">–</b></span>
      <span class="stat">blocks <b id="blocks">–</b></span><span class="stat">voices <b id="voices">–</b></span>
      <span class="stat">master</span><span class="meter" id="master"><i class="rms"></i><i class="peak"></i></span>
      <span class="stat" id="sync" hidden></span>
      <span class="stat" id="audio" role="alert" hidden></span>
    </header>
    <section id="bar"><div id="transport">
      <button id="t-play" title="play">▶</button><button id="t-stop" title="stop">■</button>
      <span class="stat" id="t-pos">0:00.0</span><input type="range" id="t-seek" min="0" max="100" step="0.1" value="0">
      <span class="stat" id="t-dur">0:00.0</span><button id="t-loop" title="loop">⟳</button>
      <button id="t-slower" title="slower">−</button><span class="stat"><b id="t-bpm">–</b> bpm</span><button id="t-faster" title="faster">+</button>
    </div><div id="bar-groups"></div>
    <div id="spectrum" title="master spectrum, third-octave bands 25 Hz – 20 kHz, −72…0 dB"></div></section>
    <section id="rig" hidden aria-labelledby="rig-title">
      <div id="rig-head"><h2 id="rig-title">Zones</h2><span class="stat" id="scene-name" role="status" aria-live="polite"></span>
        <div id="scene-buttons" role="group" aria-label="Scenes"></div></div>
      <ul id="zones" role="list"></ul>
      <div id="keyboard" aria-hidden="true"></div>
    </section>
    <section id="sounds" hidden aria-labelledby="sounds-title"><div id="sounds-head"><h2 id="sounds-title">Sounds</h2>
      <form id="save-scene"><input id="save-name" autocomplete="off" maxlength="100" placeholder="Scene name" aria-label="Name of the scene to save">
      <button class="btn" id="save-button">Save as scene</button></form><span class="stat" id="save-said" role="status" aria-live="polite"></span></div>
      <span class="stat" id="sounds-problem" hidden></span><ul id="sound-list" role="list"></ul></section>
    <div id="picker" hidden role="dialog" aria-modal="true" aria-labelledby="picker-title"><div class="panel">
      <div class="top"><h2 id="picker-title">Pick a preset</h2><button class="btn" id="picker-close" aria-label="Close the preset list">✕</button></div>
      <div class="search"><input id="preset-search" type="search" autocomplete="off" placeholder="Search by name" aria-label="Search presets by name"></div>
      <div id="preset-list"></div></div></div>
    <section id="strips" title="strip peaks: MIDI channels 1–16, osc, tone, effect returns, tracks"></section>
    <main id="controls"></main>
    <script>
    "use strict";
    (function(){
    const token=new URLSearchParams(location.search).get("token");
    const $=id=>document.getElementById(id);
    const widgets=new Map();
    let ws=null,hello=null,params={};
    window.carillon={widgets,get hello(){return hello},received:0,hellos:0,attempts:0,connected:false,rig:null,scenes:0,sounds:[],soundUpdates:0};
    function send(o){if(ws&&ws.readyState===1)ws.send(JSON.stringify(o))}
    function el(tag,cls,text){const e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e}
    function clamp(x){return Math.max(0,Math.min(1,x))}
    // Switches show their value (a toggle's hardware position says nothing of its state).
    function isOn(s){const a=Math.min(s.min,s.max),b=Math.max(s.min,s.max);return b>a?(s.value-a)/(b-a)>=0.5||(s.kind==="pad"&&s.value>a):s.value>0}
    // A vertical drag over an element: position 0..1 (absolute on a track, relative on a knob).
    function drag(target,w,absolute){
      let startY=0,startP=0;
      function at(e){const r=target.getBoundingClientRect();return clamp(1-(e.clientY-r.top)/r.height)}
      target.addEventListener("pointerdown",e=>{e.preventDefault();target.setPointerCapture(e.pointerId);
        startY=e.clientY;startP=w.state.position;w.dragging=true;move(e)});
      function move(e){if(!w.dragging)return;
        const p=absolute?at(e):clamp(startP+(startY-e.clientY)/160);
        w.state.position=p;w.draw();send({type:"control",name:w.state.name,position:p})}
      target.addEventListener("pointermove",move);
      const end=()=>{w.dragging=false};target.addEventListener("pointerup",end);target.addEventListener("pointercancel",end);
      // By keyboard too: a slider (arrows step 1/127 as a MIDI value would, Page keys a tenth, Home and End the ends).
      target.tabIndex=0;target.setAttribute("role","slider");target.setAttribute("aria-label",w.state.name);
      target.setAttribute("aria-valuemin","0");target.setAttribute("aria-valuemax","100");
      target.addEventListener("keydown",e=>{
        const step={ArrowUp:1/127,ArrowRight:1/127,ArrowDown:-1/127,ArrowLeft:-1/127,PageUp:0.1,PageDown:-0.1}[e.key];
        let p=null;
        if(step!==undefined)p=clamp(w.state.position+step);else if(e.key==="Home")p=0;else if(e.key==="End")p=1;
        if(p===null)return;
        e.preventDefault();w.state.position=p;w.draw();send({type:"control",name:w.state.name,position:p})});
    }
    /// A slider's or button's state for assistive technology.
    function announce(target,w){
      if(target.getAttribute("role")==="slider"){target.setAttribute("aria-valuenow",Math.round(w.state.position*100));
        target.setAttribute("aria-valuetext",w.state.display)}
      else target.setAttribute("aria-pressed",isOn(w.state)?"true":"false");
    }
    function press(btn,w,kind){
      const down=()=>{if(kind==="toggle"){send({type:"control",name:w.state.name,position:isOn(w.state)?0:1})}
        else{btn.classList.add("on");send({type:"control",name:w.state.name,position:1})}};
      btn.addEventListener("pointerdown",e=>{e.preventDefault();btn.setPointerCapture(e.pointerId);down()});
      const up=()=>{if(kind==="button"||kind==="pad"){send({type:"control",name:w.state.name,position:0})}
        if(kind!=="toggle")setTimeout(()=>w.draw(),120)};
      btn.addEventListener("pointerup",up);btn.addEventListener("pointercancel",up);
      // Space or Enter presses it (held for a button, a pad or a momentary control, as a finger would).
      btn.setAttribute("aria-label",w.state.name);
      btn.addEventListener("keydown",e=>{if(e.key===" "||e.key==="Enter"){e.preventDefault();if(!e.repeat)down()}});
      btn.addEventListener("keyup",e=>{if(e.key===" "||e.key==="Enter"){e.preventDefault();up()}});
    }
    function make(c){
      const box=el("div","w "+c.kind);box.dataset.control=c.name;box.dataset.kind=c.kind;
      const w={state:c,box,dragging:false,draw(){}};
      box.append(el("div","label",c.name));
      const value=el("div","value");
      if(c.kind==="fader"){
        const t=el("div","track"),fill=el("div","fill"),cap=el("div","cap");t.append(fill,cap);box.append(t,value);
        drag(t,w,true);
        w.draw=()=>{const p=w.state.position*100;fill.style.height=p+"%";cap.style.bottom=p+"%";announce(t,w)};
      }else if(c.kind==="knob"||c.kind==="encoder"){
        const k=el("div","dial"+(c.kind==="encoder"?" encoder":""));box.append(k,value);drag(k,w,false);
        w.draw=()=>{k.style.setProperty("--p",w.state.position);announce(k,w)};
      }else if(c.kind==="toggle"||c.kind==="button"||c.kind==="momentary"||c.kind==="pad"){
        const b=el("button","press",c.kind==="pad"?"":c.name);box.append(b,value);press(b,w,c.kind);
        w.draw=()=>{b.classList.toggle("on",isOn(w.state));announce(b,w)};
      }else if(c.kind==="selector"){
        const n=c.steps||2;
        if(n<=12){const s=el("div","sel");if(n>6)box.classList.add("many");const bs=[];
          for(let i=0;i<n;i++){const b=el("button",null,String(i+1));b.setAttribute("aria-label",c.name+" "+(i+1));
            const pick=e=>{e.preventDefault();send({type:"control",name:c.name,position:n>1?i/(n-1):0})};
            b.addEventListener("pointerdown",pick);
            b.addEventListener("keydown",e=>{if(e.key===" "||e.key==="Enter")pick(e)});s.append(b);bs.push(b)}
          box.append(s,value);w.draw=()=>{const i=Math.round(w.state.position*(n-1));bs.forEach((b,j)=>b.classList.toggle("on",i===j))};
        }else{const k=el("div","dial");box.append(k,value);drag(k,w,false);w.draw=()=>{k.style.setProperty("--p",w.state.position);announce(k,w)}}
      }else{box.append(value)}
      const base=w.draw;
      w.draw=()=>{base();value.textContent=w.state.display;box.classList.toggle("pickup",!!w.state.pickup);
        box.dataset.value=w.state.value;box.dataset.position=w.state.position};
      w.draw();return w;
    }
    // The controls in their groups, as the host orders them: a group is a column (a row on a phone),
    // its strip's meter beside its fader; the transport's groups go in the bar with the transport.
    // An xy pad: its parts (x, y, touch: controls of their own on the host) drawn as one square.
    // A finger down sends x and y, then touch 1; moving sends x and y once a frame; lifting sends touch 0.
    function makePad(name){
      const box=el("div","w xy"),area=el("div","xy-area"),dot=el("i","dot"),value=el("div","value");
      box.dataset.control=name;box.dataset.kind="xy";area.append(dot);box.append(el("div","label",name),area,value);
      area.tabIndex=0;area.setAttribute("role","group");area.setAttribute("aria-label",name+" (arrows move, Space touches)");
      const pad={box,parts:{},down:false,pending:false};
      const pos=k=>pad.parts[k]?pad.parts[k].state.position:0.5;
      pad.draw=()=>{dot.style.left=(pos("x")*100)+"%";dot.style.top=((1-pos("y"))*100)+"%";
        const t=pad.parts.touch;box.classList.toggle("on",!!t&&t.state.value>0);
        value.textContent=["x","y"].filter(k=>pad.parts[k]).map(k=>pad.parts[k].state.display).join(" · ");
        box.dataset.x=pos("x");box.dataset.y=pos("y")};
      const sendAxes=()=>{for(const k of ["x","y"])if(pad.parts[k])send({type:"control",name:pad.parts[k].state.name,position:pad.parts[k].state.position})};
      const touch=on=>{const t=pad.parts.touch;if(t)send({type:"control",name:t.state.name,position:on?1:0})};
      const hold=on=>{pad.down=on;for(const k in pad.parts)pad.parts[k].dragging=on};
      function at(e){const r=area.getBoundingClientRect();
        if(pad.parts.x)pad.parts.x.state.position=clamp((e.clientX-r.left)/r.width);
        if(pad.parts.y)pad.parts.y.state.position=clamp(1-(e.clientY-r.top)/r.height);pad.draw()}
      area.addEventListener("pointerdown",e=>{e.preventDefault();area.setPointerCapture(e.pointerId);hold(true);at(e);sendAxes();touch(true)});
      area.addEventListener("pointermove",e=>{if(!pad.down)return;at(e);
        if(!pad.pending){pad.pending=true;requestAnimationFrame(()=>{pad.pending=false;sendAxes()})}});
      const up=()=>{if(!pad.down)return;hold(false);sendAxes();touch(false)};
      area.addEventListener("pointerup",up);area.addEventListener("pointercancel",up);
      area.addEventListener("keydown",e=>{
        const d={ArrowLeft:["x",-1],ArrowRight:["x",1],ArrowDown:["y",-1],ArrowUp:["y",1]}[e.key];
        if(d&&pad.parts[d[0]]){e.preventDefault();const w=pad.parts[d[0]];w.state.position=clamp(w.state.position+d[1]/127);pad.draw();
          send({type:"control",name:w.state.name,position:w.state.position})}
        else if((e.key===" "||e.key==="Enter")&&!e.repeat){e.preventDefault();touch(true)}});
      area.addEventListener("keyup",e=>{if(e.key===" "||e.key==="Enter"){e.preventDefault();touch(false)}});
      return pad;
    }
    // The rig: a 128-key keyboard (white keys equal, black keys between them), each zone of the current
    // scene a bar over its keys with its name, keys and destinations; a zone's row stacks a layer.
    const isBlack=n=>[1,3,6,8,10].includes(n%12);
    const whitesBelow=[];{let c=0;for(let n=0;n<=128;n++){whitesBelow.push(c);if(n<128&&!isBlack(n))c++}}
    const WHITES=whitesBelow[128];
    function keyEdges(n){const w=whitesBelow[n];return isBlack(n)?[w-0.35,w+0.35]:[w,w+1]}
    const pct=x=>(100*x/WHITES)+"%";
    function noteName(n){return ["C","C#","D","D#","E","F","F#","G","G#","A","A#","B"][n%12]+(Math.floor(n/12)-1)}
    const ROW=34;
    function drawKeyboard(zones){
      const kb=$("keyboard");
      if(!kb.children.length)for(let n=0;n<128;n++){const e=keyEdges(n),k=el("i",isBlack(n)?"bk":"wk");
        k.dataset.key=n;k.style.left=pct(e[0]);k.style.width=pct(e[1]-e[0]);kb.append(k);
        if(n%12===0){const l=el("span","oct",noteName(n));l.style.left=pct(e[0]);kb.append(l)}}
      for(const k of kb.querySelectorAll(".wk")){const n=Number(k.dataset.key);k.classList.toggle("in",zones.some(z=>z.low<=n&&n<=z.high))}
    }
    function rig(r){
      const scenes=r.scenes||[],zones=r.zones||[];
      window.carillon.rig={scenes,scene:r.scene,zones};window.carillon.scenes++;
      const box=$("rig");box.hidden=!zones.length&&!scenes.length;if(box.hidden)return;
      const name=r.scene!=null?scenes[r.scene]:null;
      $("scene-name").textContent=scenes.length?"Scene: "+(name||"none (the mapping's own zones)"):"";
      $("rig-title").textContent=name?"Zones of "+name:"Zones";
      const bs=$("scene-buttons");
      if(bs.dataset.names!==JSON.stringify(scenes)){bs.textContent="";bs.dataset.names=JSON.stringify(scenes);
        scenes.forEach((s,i)=>{const b=el("button",null,s);b.dataset.scene=i;b.setAttribute("aria-label","Scene "+s);
          b.addEventListener("click",()=>send({type:"set",parameter:"scene.select",value:i}));bs.append(b)})}
      for(const b of bs.children){const on=Number(b.dataset.scene)===r.scene;b.classList.toggle("on",on);b.setAttribute("aria-pressed",on?"true":"false")}
      const list=$("zones");list.textContent="";
      list.setAttribute("aria-label",zones.length+" zone"+(zones.length===1?"":"s")+(name?" in scene "+name:""));
      if(!zones.length){const li=el("li","none","No zones: every key plays on its own channel.");list.append(li);list.style.height=ROW+"px"}
      else list.style.height=(Math.max(...zones.map(z=>z.row))+1)*ROW+"px";
      zones.forEach((z,i)=>{const li=el("li","zone"),a=keyEdges(z.low)[0],b=keyEdges(z.high)[1];
        li.dataset.zone=z.name;li.dataset.row=z.row;li.dataset.low=z.low;li.dataset.high=z.high;
        li.style.left=pct(a);li.style.width="calc("+pct(b-a)+" - 2px)";li.style.top=(z.row*ROW)+"px";
        li.style.setProperty("--hue",(210+i*67)%360);
        const takes=z.takes?" "+z.takes:"";li.setAttribute("aria-label",z.spoken);li.title=z.name+" "+z.keys+takes+" → "+z.short;
        li.append(el("b",null,z.name)," ",el("span","keys",z.keys+takes)," → ",el("span","to",z.short));list.append(li)});
      drawKeyboard(zones);
    }
    // The channel strips: what each channel plays (name, bank:program) and a picker of its font's presets,
    // searchable by name, grouped by General MIDI class (programs in eights); channel 10 picks among the drum kits.
    const GM_CLASSES=["Piano","Chromatic Percussion","Organ","Guitar","Bass","Strings","Ensemble","Brass","Reed","Pipe",
      "Synth Lead","Synth Pad","Synth Effects","Ethnic","Percussive","Sound Effects"];
    let fonts=[],sounds=[],picking=null;
    const soundText=s=>(s.name||"no preset")+" ";
    const bankProgram=s=>s.bank+":"+s.program;
    function drawSounds(list){
      sounds=list||[];const byChannel=new Map(sounds.map(s=>[s.channel,s]));
      window.carillon.sounds=sounds;window.carillon.soundUpdates++;
      const ul=$("sound-list");ul.textContent="";
      for(const s of sounds){const li=el("li"),b=el("button","sound");b.dataset.channel=s.channel;
        b.append(el("span","ch","Ch "+s.channel),el("span","name",s.name||"no preset"),el("span","bp",bankProgram(s)));
        b.setAttribute("aria-label","Channel "+s.channel+": "+soundText(s)+bankProgram(s)+(s.font!=null?". Pick another":""));
        b.disabled=s.font==null;b.addEventListener("click",()=>openPicker(s.channel));li.append(b);ul.append(li)}
      for(const g of document.querySelectorAll(".gpreset")){const s=byChannel.get(Number(g.dataset.channel));g.hidden=!s;if(!s)continue;
        g.textContent=s.name||bankProgram(s);g.title=soundText(s)+bankProgram(s);
        g.setAttribute("aria-label","Channel "+s.channel+": "+soundText(s)+bankProgram(s)+". Pick another")}
      if(picking!=null)drawPresets();
    }
    function openPicker(channel){
      const s=sounds.find(x=>x.channel===channel);if(!s||s.font==null)return;
      picking=channel;$("picker-title").textContent="Channel "+channel+" — "+fonts[s.font].name;
      $("preset-search").value="";$("picker").hidden=false;drawPresets();$("preset-search").focus();
    }
    function closePicker(){picking=null;$("picker").hidden=true}
    function drawPresets(){
      const s=sounds.find(x=>x.channel===picking);if(!s||s.font==null){closePicker();return}
      const words=$("preset-search").value.toLowerCase().split(" ").filter(Boolean);
      const match=p=>words.every(w=>p.name.toLowerCase().includes(w)||(p.bank+":"+p.program)===w);
      const groups=new Map();
      const order=picking===10?["Drum kits",...GM_CLASSES]:[...GM_CLASSES,"Drum kits"];
      // What bank select and program change reach (FluidSynth's gs style): channel 10 its drum kits, the others banks 0…127.
      const reach=p=>picking===10?p.bank===128:p.bank<=127;
      for(const p of fonts[s.font].presets){if(!reach(p)||!match(p))continue;
        const g=p.bank===128?"Drum kits":GM_CLASSES[p.program>>3];if(!groups.has(g))groups.set(g,[]);groups.get(g).push(p)}
      const box=$("preset-list");box.textContent="";
      for(const g of order){const ps=groups.get(g);if(!ps)continue;
        const sec=el("section");sec.setAttribute("role","group");sec.setAttribute("aria-label",g);sec.dataset.class=g;
        const row=el("div","presets");sec.append(el("h3",null,g),row);
        for(const p of ps){const b=el("button",null,p.name);b.append(el("span","bp",p.bank+":"+p.program));
          b.dataset.bank=p.bank;b.dataset.program=p.program;b.dataset.name=p.name;
          const on=p.bank===s.bank&&p.program===s.program;b.classList.toggle("on",on);b.setAttribute("aria-pressed",on?"true":"false");
          b.addEventListener("click",()=>{send({type:"preset",channel:picking,bank:p.bank,program:p.program});closePicker()});row.append(b)}
        box.append(sec)}
      if(!box.children.length)box.append(el("div","none","No preset matches."));
    }
    // "Save as scene": what plays now, into the mapping file under the name given (one of that name is replaced).
    $("save-scene").addEventListener("submit",e=>{e.preventDefault();const name=$("save-name").value.trim();
      if(!name){$("save-said").textContent="give the scene a name";return}
      $("save-said").textContent="saving…";send({type:"save-scene",name})});
    $("preset-search").addEventListener("input",drawPresets);
    $("picker-close").addEventListener("click",closePicker);
    $("picker").addEventListener("click",e=>{if(e.target===$("picker"))closePicker()});
    document.addEventListener("keydown",e=>{if(e.key==="Escape"&&picking!=null)closePicker()});
    // Enter in the search picks the first preset that matches.
    $("preset-search").addEventListener("keydown",e=>{if(e.key==="Enter"){const b=$("preset-list").querySelector("button");if(b){e.preventDefault();b.click()}}});
    function sounds_(h){
      fonts=h.fonts||[];$("sounds").hidden=!h.sounds;
      $("sounds-problem").hidden=!h.soundsProblem;$("sounds-problem").textContent=h.soundsProblem||"";
      drawSounds(h.sounds);
    }
    function build(h){
      hello=h;const main=$("controls"),bar=$("bar-groups");main.textContent="";bar.textContent="";widgets.clear();
      const pads=new Map();
      $("title").textContent="Carillon"+(h.mapping?" — "+h.mapping:"");
      for(const p of h.parameters)params[p.address]=p;
      if(!h.controls.length)main.append(el("div","empty","No mapping: start with --mapping FILE to see controls here."));
      const byName=new Map(h.controls.map(c=>[c.name,c]));
      for(const g of h.groups||[]){
        const box=el("section","group");box.dataset.group=g.name;box.setAttribute("role","group");box.setAttribute("aria-label",g.name);
        const body=el("div","gbody");box.append(el("h2",null,g.name));
        // A channel's strip shows the preset it plays; a press opens the picker.
        if(/^([1-9]|1[0-6])$/.test(g.strip||"")){const p=el("button","gpreset");p.dataset.channel=g.strip;p.hidden=true;
          p.addEventListener("click",()=>openPicker(Number(g.strip)));box.append(p)}
        box.append(body);
        let meter=null;
        if(g.strip!=null){meter=el("span","gmeter");meter.dataset.strip=g.strip;meter.title="strip "+g.strip+" peak";meter.append(el("i"))}
        let switches=null;   // a group's buttons stand together, as a strip's S/M/R keys do
        for(const name of g.controls){const c=byName.get(name);if(!c)continue;
          if(c.pad){let pad=pads.get(c.pad);if(!pad){pad=makePad(c.pad);pads.set(c.pad,pad);body.append(pad.box)}
            const part={state:c,box:pad.box,dragging:false,draw:()=>pad.draw()};pad.parts[c.part]=part;widgets.set(name,part);pad.draw();continue}
          const w=make(c);widgets.set(name,w);
          const isSwitch=c.kind==="toggle"||c.kind==="button"||c.kind==="momentary";
          if(!isSwitch)switches=null;
          if(meter&&!meter.parentNode&&c.kind==="fader"){const row=el("div","with-meter");row.append(w.box,meter);body.append(row)}
          else if(isSwitch){if(!switches){switches=el("div","switches");body.append(switches)}switches.append(w.box)}
          else body.append(w.box)}
        (g.transport?bar:main).append(box);
      }
      $("transport").classList.toggle("show",!!h.play);
      rig(h);sounds_(h);
    }
    function clock(s){s=Math.max(0,s||0);const m=Math.floor(s/60),r=(s-60*m).toFixed(1);return m+":"+(r<10?"0":"")+r}
    let seeking=false;
    function status(s){
      if(s.load!=null)$("load").textContent=(s.load*100).toFixed(0)+"%";
      if(s.xruns!=null)$("xruns").textContent=s.xruns;if(s.blocks!=null)$("blocks").textContent=s.blocks;
      if(s.voices!=null)$("voices").textContent=s.voices;
      $("sync").hidden=!s.sync;$("sync").textContent=s.sync||"";
      $("audio").hidden=!s.audio;$("audio").textContent=s.audio||"";
      const db=x=>x>0?clamp((20*Math.log10(x)+60)/60):0;
      $("master").querySelector(".peak").style.width=(db(s.peak)*100)+"%";
      $("master").querySelector(".rms").style.width=(db(s.rms)*100)+"%";
      if(s.strips){const box=$("strips");box.classList.add("show");
        while(box.children.length<s.strips.length){const m=el("span","strip");m.append(el("i"));box.append(m)}
        s.strips.forEach((p,i)=>{const n=s.stripNames?s.stripNames[i]:String(i+1);box.children[i].title=isNaN(n)?n:"channel "+n})
        s.strips.forEach((p,i)=>{box.children[i].firstChild.style.height=(db(p)*100)+"%"})
        if(s.stripKeys)for(const m of document.querySelectorAll(".gmeter")){const i=s.stripKeys.indexOf(m.dataset.strip);
          m.firstChild.style.height=(i<0?0:db(s.strips[i])*100)+"%"}}
      if(s.spectrum){const box=$("spectrum");box.classList.add("show");
        while(box.children.length<s.spectrum.length)box.append(el("i"));
        s.spectrum.forEach((d,i)=>{box.children[i].style.height=(Math.max(0,Math.min(1,(d+72)/72))*100)+"%"})}
      const t=s.transport;if(!t)return;
      $("t-pos").textContent=clock(t.position);$("t-dur").textContent=clock(t.duration);
      if(!seeking)$("t-seek").value=t.duration>0?100*t.position/t.duration:0;
      $("t-play").classList.toggle("on",t.playing);$("t-loop").classList.toggle("on",t.looping);
      $("t-bpm").textContent=t.bpm.toFixed(1);$("t-bpm").dataset.bpm=t.bpm;$("t-loop").dataset.on=t.looping?1:0;
    }
    function tempo(f){const p=params["transport.tempo"],b=Number($("t-bpm").dataset.bpm||0);
      if(p&&b>0)send({type:"set",parameter:"transport.tempo",value:Math.max(p.min,Math.min(p.max,b*f))})}
    $("t-play").onclick=()=>send({type:"set",parameter:"transport.play",value:1});
    $("t-stop").onclick=()=>send({type:"set",parameter:"transport.stop",value:1});
    $("t-loop").onclick=()=>send({type:"set",parameter:"transport.loop",value:$("t-loop").dataset.on==="1"?0:1});
    $("t-slower").onclick=()=>tempo(1/1.05);$("t-faster").onclick=()=>tempo(1.05);
    $("t-seek").addEventListener("input",()=>{seeking=true});
    $("t-seek").addEventListener("change",e=>{seeking=false;send({type:"set",parameter:"transport.position",value:Number(e.target.value)})});
    // Reconnect by itself: after 0.5 s, doubling to 10 s at most, saying so; at once back to 0.5 s when it opens.
    let retries=0;
    function connect(){
      ws=new WebSocket((location.protocol==="https:"?"wss://":"ws://")+location.host+"/ws"+(token?"?token="+encodeURIComponent(token):""));
      ws.onopen=()=>{retries=0;window.carillon.connected=true;$("conn").classList.add("up");$("conn-text").textContent=""};
      ws.onclose=()=>{
        window.carillon.connected=false;$("conn").classList.remove("up");
        const wait=Math.min(10000,500*2**retries);retries++;window.carillon.attempts++;
        $("conn-text").textContent="host not reachable - retrying in "+(wait/1000).toFixed(1)+" s";
        setTimeout(connect,wait)};
      ws.onmessage=e=>{let m;try{m=JSON.parse(e.data)}catch(_){return}window.carillon.received++;
        if(m.type==="hello"){window.carillon.hellos++;build(m)}
        else if(m.type==="controls"){for(const c of m.controls){const w=widgets.get(c.name);if(!w)continue;
          const keep=w.dragging?w.state.position:null;Object.assign(w.state,c);if(keep!=null)w.state.position=keep;w.draw()}}
        else if(m.type==="status")status(m);
        else if(m.type==="scene")rig(m);
        else if(m.type==="sounds")drawSounds(m.channels);
        else if(m.type==="saved"){$("save-said").textContent="saved scene "+m.scene;window.carillon.saved=m.scene}
        else if(m.type==="refused"&&m.reason==="save-failed")$("save-said").textContent=m.message||"not saved";
      };
    }
    connect();
    })();
    </script>
    </body></html>
    """
}
