/*
 * sim_call.c - one record as one call of LMCache's simulator, the way
 * lct sim and lct export --hit-rate both feed it: a lookup imported from
 * LMCache's logs counts the tokens it logged (seq_len, chunk size), and a
 * record that states its chunks' bytes by LMCache's dtype table weighs
 * them so (sim.h).
 */
#include "sim.h"

void tool_sim_call_begin(tool_sim_call *c, const lct_record *rec, bool read)
{
    *c = (tool_sim_call){.read = read};
    c->logged = read && lct_lookup_tokens(rec, &c->seq_len, &c->chunk_tokens);
    c->sized = lct_lookup_chunk_bytes(rec, &c->chunk_bytes);
}

lct_status tool_sim_call_key(const tool_sim_call *c, lct_sim *sim,
                             const lct_object_key *key, uint64_t bytes,
                             double t_mono)
{
    return lct_sim_add_key(sim, key, c->sized ? c->chunk_bytes : bytes,
                           t_mono, c->read);
}

lct_status tool_sim_call_end(const tool_sim_call *c, lct_sim *sim)
{
    return c->logged ? lct_sim_end_call_tokens(sim, 1, c->chunk_tokens,
                                               c->seq_len)
                     : lct_sim_end_call(sim, 1);
}
