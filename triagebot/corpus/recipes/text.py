"""Text recipes: token ids (with the side inputs some text towers take), encoder-decoders,
retrieval-augmented generation, block drafters."""

from __future__ import annotations

from triagebot.corpus.recipes.common import (
    BATCH,
    SEQ,
    WIDTH_GUESS,
    Context,
    decoder_ids,
    first_int,
    ones,
    text_inputs,
    text_limit,
    token_ids,
)
from triagebot.results import InputSpec


def text(ctx: Context) -> list[InputSpec] | None:
    if "input_ids" not in ctx.params:
        return None
    return text_inputs(ctx)


def encoder_decoder(ctx: Context) -> list[InputSpec] | None:
    if "input_ids" not in ctx.params or "decoder_input_ids" not in ctx.params:
        return None
    return [*text_inputs(ctx), token_ids("decoder_input_ids", [BATCH, SEQ // 2], text_limit(ctx))]


def retrieved_context(ctx: Context) -> list[InputSpec] | None:
    """A question with the documents a retriever returned for it, as RAG takes them when it has no
    retriever object: n_docs tokenised contexts, their scores, and the answer's decoder ids."""
    if not {"context_input_ids", "context_attention_mask", "doc_scores"} <= ctx.params:
        return None
    docs = first_int(ctx.get("n_docs", None), 5)
    return [
        *text_inputs(ctx, batch=1),
        token_ids("context_input_ids", [docs, SEQ], text_limit(ctx)),
        ones("context_attention_mask", [docs, SEQ]),
        InputSpec(name="doc_scores", shape=[1, docs], dtype="float32"),
        *decoder_ids(ctx),
    ]


def draft_block(ctx: Context) -> list[InputSpec] | None:
    """Block-diffusion drafters (MuseGlimmer's assistant, DFlash-style): embeddings of the block to
    denoise, next to the target model's hidden states of the accepted context, the states of each
    target layer it reads concatenated."""
    if not {"noise_embeds", "context_hidden_states"} <= set(ctx.required):
        return None
    width = first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    block = first_int(ctx.get("block_size", None), SEQ)
    layers = ctx.get("target_layer_ids", None)
    read = len(layers) if isinstance(layers, list) and layers else 1
    return [
        InputSpec(name="noise_embeds", shape=[1, block, width], dtype="float32"),
        InputSpec(name="context_hidden_states", shape=[1, SEQ // 2, width * read], dtype="float32"),
    ]
