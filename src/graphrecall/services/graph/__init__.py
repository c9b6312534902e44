"""Graph face (Zep): users, threads, graphs, episodes, nodes, edges, search and the rest."""
