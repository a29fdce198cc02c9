"""DocuTeam (mixed-initiative multi-agent discussion around documents): study data and analysis."""
