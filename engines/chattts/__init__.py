"""ChatTTS engine.

Rooms (each package's ``__init__`` names its public surface)::

    plugin.py, cli.py      the plugin hooks and ChatTTS's own commands (import-light)
    engine.py              ChatTTSEngine: IR chunks -> prompts -> GPT frames -> audio, streamed
    runtime.py             backend, device and precision, decided once before anything loads
    gpt/                   the GPT: weights, one decode loop, one sampler, four runners
    audio/                 Decoder/DVAE (-> mel), Vocos (-> 24 kHz), streaming vocoding
    assets.py, download.py model folders, integrity checks, ``mixvox download``
    tokenizer.py, speaker.py, render.py   text -> tokens, voices, IR -> ChatTTS text
    onnx_graph.py          the torch-free ONNX graph builder and on-disk graph cache
    randckpt.py            random-weight checkpoints for tests and benchmarks

Imports go one way: engine.py uses gpt/ and audio/, which use runtime.py, onnx_graph.py and
assets.py; gpt/ and audio/ never import each other or the engine, and nothing imports in a
circle (``tests/test_chattts_layout.py`` checks both).
"""
