"""Operations of both faces, written once against the store interface."""
